// The bundle's entry (esbuild writes it to lineup_jupyter/static/lineup.js): the anywidget
// module of the Host view, with the protocol pieces the browser checks with.

export { SANDBOX, shellCsp, shellDocument, surfaceCsp, surfaceDocument } from "./frames.js";
export * as rules from "./protocol.generated.js";
export {
  checkJsonValue,
  isPlainObject,
  jsonByteLength,
  memberPath,
  validateSurfaceMessage,
} from "./surface_message.js";
export { default } from "./widget.js";
