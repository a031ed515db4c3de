// `npm run build`: bundle js/index.js into lineup_jupyter/static/lineup.js, js/appcenter.js
// into appcenter.js, js/inspector.js into inspector.js and js/waiting.js into waiting.js (ES
// modules, nothing fetched at run time).
// hatch-jupyter-builder runs this during `pip install`; paths are resolved from this file so
// the working directory does not matter.

import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));

await build({
  absWorkingDir: root,
  // The host's view, the app center's (`host.apps` in a cell), the inspector's (`host.inspector`),
  // and the line a cell awaiting the user shows (`await agent.call(...)`).
  entryPoints: {
    lineup: "js/index.js",
    appcenter: "js/appcenter.js",
    inspector: "js/inspector.js",
    waiting: "js/waiting.js",
  },
  outdir: "lineup_jupyter/static",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning",
});
