// Bundles each widget entry into ../hermes_notebook/static/ as one minified ESM file (anywidget `_esm`),
// plus the widget's stylesheet (anywidget `_css`). `--dev` adds inline sourcemaps; `--watch` rebuilds.
import { build, context } from "esbuild";
import { fileURLToPath } from "node:url";

const dev = process.argv.includes("--dev");
const watch = process.argv.includes("--watch");
const outdir = fileURLToPath(new URL("../hermes_notebook/static/", import.meta.url));

/** @type {import("esbuild").BuildOptions} */
const options = {
  entryPoints: ["src/chat.ts", "src/jobs.ts", "src/progress.ts", "src/turn.ts", "src/chat.css", "src/jobs.css", "src/progress.css"],
  outdir,
  bundle: true,
  format: "esm",
  target: ["es2022"],
  minify: !dev,
  sourcemap: dev ? "inline" : false,
  legalComments: "none",
  // Some UMD bundles check `define.amd`; inside Jupyter's RequireJS page that would hijack them
  // (manzt/anywidget#369, the same define lonboard sets).
  define: { "define.amd": "false" },
  logLevel: "info",
  metafile: true,
};

if (watch) {
  const ctx = await context(options);
  await ctx.watch();
} else {
  const result = await build(options);
  for (const [file, info] of Object.entries(result.metafile.outputs)) {
    console.log(`${file.replace(/^.*hermes_notebook\//, "hermes_notebook/")}  ${(info.bytes / 1024).toFixed(1)} KB`);
  }
}
