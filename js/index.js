// The bundle's entry (esbuild writes it to lineup_jupyter/static/lineup.js). The widget's
// front end will be added here; for now it exposes the protocol pieces the browser checks with.

export * as rules from "./protocol.generated.js";
export {
  checkJsonValue,
  isPlainObject,
  jsonByteLength,
  memberPath,
  validateSurfaceMessage,
} from "./surface_message.js";
