// Styles of the live Jobs view, injected with the view (only JupyterLab CSS variables, with fallbacks).
// The last rule hides the static table that the kernel displays beside the widget for saved notebooks.

export const JOBS_CSS = `
.hn-jobs-live{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:var(--jp-ui-font-size1,13px);
  color:var(--jp-ui-font-color1,CanvasText);display:flex;flex-direction:column;gap:6px}
.hn-jobs-live .hn-jobs-bar{display:flex;flex-wrap:wrap;align-items:center;gap:8px}
.hn-jobs-live .hn-jobs-title{font-weight:600;margin-right:auto}
.hn-jobs-live .hn-health{display:inline-flex;align-items:center;gap:4px;color:var(--jp-ui-font-color2,GrayText)}
.hn-jobs-live .hn-health::before{content:"";width:8px;height:8px;border-radius:50%;
  background:var(--jp-warn-color1,orange)}
.hn-jobs-live .hn-health[data-status="connected"]::before{background:var(--jp-success-color1,green)}
.hn-jobs-live .hn-health[data-status="error"]::before{background:var(--jp-error-color1,red)}
.hn-jobs-live .hn-health[data-status="error"]{color:var(--jp-error-color1,red)}
.hn-jobs-live .hn-updated{color:var(--jp-ui-font-color2,GrayText)}
.hn-jobs-live button{font:inherit;color:var(--jp-ui-font-color1,ButtonText);background:var(--jp-layout-color2,ButtonFace);
  border:1px solid var(--jp-border-color1,#888);border-radius:3px;padding:2px 8px;cursor:pointer}
.hn-jobs-live button:hover{background:var(--jp-layout-color3,#ddd)}
.hn-jobs-live button:focus-visible,.hn-jobs-live input:focus-visible,.hn-jobs-live select:focus-visible,
.hn-jobs-live textarea:focus-visible{outline:2px solid var(--jp-brand-color1,Highlight);outline-offset:1px}
.hn-jobs-live button:disabled{opacity:.5;cursor:default}
.hn-jobs-live button.hn-danger{color:var(--jp-error-color1,red);border-color:var(--jp-error-color1,red)}
.hn-jobs-live input,.hn-jobs-live select,.hn-jobs-live textarea{font:inherit;color:var(--jp-ui-font-color1,FieldText);
  background:var(--jp-input-background,Field);border:1px solid var(--jp-border-color1,#888);border-radius:2px;padding:2px 4px}
.hn-jobs-live .hn-notice{padding:4px 8px;border-radius:3px;background:var(--jp-info-color3,#e3f2fd)}
.hn-jobs-live .hn-notice[data-kind="error"]{background:var(--jp-error-color3,#fde0e0)}
.hn-jobs-live .hn-notice:empty{display:none}
.hn-jobs-live table{border-collapse:collapse;width:100%}
.hn-jobs-live th,.hn-jobs-live td{border-bottom:1px solid var(--jp-border-color2,#8884);padding:4px 8px;
  text-align:left;vertical-align:top}
.hn-jobs-live th{color:var(--jp-ui-font-color2,inherit);font-weight:600}
.hn-jobs-live .hn-sub{color:var(--jp-ui-font-color2,GrayText);font-size:var(--jp-ui-font-size0,11px)}
.hn-jobs-live code{font-family:var(--jp-code-font-family,monospace)}
.hn-jobs-live .hn-err{color:var(--jp-error-color1,red)}
.hn-jobs-live .hn-ok{color:var(--jp-success-color1,green)}
.hn-jobs-live .hn-actions{display:flex;flex-wrap:wrap;gap:4px}
.hn-jobs-live .hn-empty{color:var(--jp-ui-font-color2,GrayText);font-style:italic}
.hn-jobs-live form{border:1px solid var(--jp-border-color2,#8884);border-radius:4px;padding:8px;
  display:grid;grid-template-columns:max-content 1fr;gap:6px 10px;align-items:start}
.hn-jobs-live form[hidden]{display:none}
.hn-jobs-live form .hn-wide{grid-column:1 / -1}
.hn-jobs-live form .hn-preset-fields{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.hn-jobs-live form textarea{min-height:4em;width:100%;box-sizing:border-box}
.hn-jobs-live form input[type="text"]{width:100%;box-sizing:border-box}
.hn-jobs-live .hn-check[data-ok="true"]{color:var(--jp-ui-font-color2,GrayText)}
.hn-jobs-live .hn-check[data-ok="false"],.hn-jobs-live .hn-field-error{color:var(--jp-error-color1,red)}
.jp-OutputArea:has(.hn-jobs-live) .hn-jobs-static-wrap{display:none}
`;
