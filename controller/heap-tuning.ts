import { getHeapSpaceStatistics } from 'node:v8';

/**
 * A controller builds its desired state as many small, long-lived objects (flows, matches, keys).
 * With V8's default young generation (16 MB semi-spaces) nearly all of them survive and are
 * copied by every scavenge: at 100,000 endpoints that copying is a large part of a full
 * recompute. 64 MB semi-spaces cut the scavenges; measured: a full recompute 2.5 s instead of
 * 2.9 s (docs/BENCHMARKS.md, bench:overlay).
 *
 * V8 sizes the young generation when the heap is set up, before any JavaScript runs: setting the
 * flag from inside the process (v8.setFlagsFromString) leaves the default in place (measured on
 * Node 20). So weft's launchers pass it on node's command line: bin/weft.js's shebang,
 * scripts/*.sh, the Dockerfile, the test and bench harnesses. NODE_OPTIONS works too.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=64';

/** Size of the young generation (both semi-spaces) this process was started with, in MB. */
export function youngGenerationMb(): number {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return space ? Math.round(space.space_size / 1e6) : 0;
}

/**
 * True when node was started with a semi-space size of its own (command line or NODE_OPTIONS), or
 * its young generation already grew past the default's 33 MB.
 */
export function youngGenerationTuned(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): boolean {
  const flagged = (a: string) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(a);
  return execArgv.some(flagged) || nodeOptions.split(/\s+/).some(flagged) || youngGenerationMb() >= 100;
}
