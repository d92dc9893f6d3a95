// Builds the JupyterLab 4 / Notebook 7 extension, prebuilt ("federated", the ecosystem's convention), into
// ../hermes_notebook/labextension/ (shipped in the wheel as share/jupyter/labextensions/hermes-notebook/).
// Step 1: esbuild compiles src/labextension.ts with our own code and libraries into labextension/lib/index.js,
// leaving JupyterLab's and Lumino's packages as imports (the app provides them at run time).
// Step 2: @jupyter/builder (JupyterLab's federated build, rspack) wraps that as a module federation container
// that shares those imports with the app, against the core package list of @jupyterlab/core-meta.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const dev = process.argv.includes("--dev");

mkdirSync(here("labextension/lib"), { recursive: true });
await build({
  entryPoints: [here("src/labextension.ts")],
  outfile: here("labextension/lib/index.js"),
  bundle: true,
  format: "esm",
  target: ["es2022"],
  external: ["@jupyterlab/*", "@lumino/*"],
  legalComments: "none",
  sourcemap: dev ? "inline" : false,
  logLevel: "warning",
});
copyFileSync(here("src/labextension.css"), here("labextension/lib/index.css"));

const builder = require.resolve("@jupyter/builder/lib/build-labextension.js");
const core = require.resolve("@jupyterlab/core-meta/core.package.json");
const args = [builder, "--core-package-file", core, ...(dev ? ["--development"] : []), here("labextension")];
const run = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
if (run.status !== 0) {
  console.error(run.stderr);
  console.error(`build-labextension: @jupyter/builder failed (exit ${run.status})`);
  process.exit(run.status ?? 1);
}
// install.json tells `jupyter labextension list` that a Python package ships this extension.
copyFileSync(here("labextension/install.json"), here("../hermes_notebook/labextension/install.json"));
console.log("hermes_notebook/labextension/  (prebuilt JupyterLab extension hermes-notebook)");
