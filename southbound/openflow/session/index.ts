/**
 * The OpenFlow 1.3 switch session layer: the only code that touches OpenFlow sockets.
 *
 *   const server = await startOpenFlowServer({ listen, tls, session: defaultSessionOptions }, log);
 *   server.registry.on('switch-up', async (sw) => {
 *     const errors = await sw.sendConfirmed(flowMods);     // batched writes + barrier
 *     await applyAtomically(sw, changes);                  // ONF bundle, all or nothing
 *     const flows = await dumpFlows(sw);                   // multipart reassembled
 *   });
 */
export * from './events.js';
export { FloodGuard } from './flood-guard.js';
export * from './listen-address.js';
export { openListener, type SwitchListener, type TlsFiles, tlsServerOptions } from './listener.js';
export { type OpenFlowServer, type OpenFlowServerConfig, startOpenFlowServer } from './openflow-server.js';
export {
  applyAtomically,
  BundleRejectedError,
  dumpFlows,
  dumpFlowsKeyed,
  dumpGroups,
  setRole,
} from './operations.js';
export { defaultSessionOptions, type SessionOptions } from './options.js';
export { normalizeDpid, type RegistryEvents, SwitchRegistry } from './registry.js';
export { expectType } from './replies.js';
export * from './session-errors.js';
export { type SessionState, SwitchSession } from './switch-session.js';
export { TypedEmitter } from './typed-emitter.js';
