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
  return nodeFlagGiven('max-semi-space-size', execArgv, nodeOptions) || youngGenerationMb() >= 100;
}

/** What small machines should pass node: one V8 helper thread (GC, compilation) beside the main one. */
export const GC_THREADS_FLAG = '--v8-pool-size=1';

/**
 * Node starts 4 V8 helper threads whatever the machine. After a large recompute they sweep and
 * mark hundreds of MB concurrently; on a 1-2 core machine they then take the CPU from the main
 * thread in scheduler slices (~4 ms), and a 0.2 ms change waits 4 ms behind them (measured:
 * bench:overlay, docs/BENCHMARKS.md). One helper leaves a core to the engine. Returns why to pass
 * GC_THREADS_FLAG, or undefined when the machine is large enough or the pool size is set.
 */
export function gcThreadsAdvice(
  cores: number,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): string | undefined {
  if (cores > 2 || nodeFlagGiven('v8-pool-size', execArgv, nodeOptions)) return undefined;
  return `this machine has ${cores} core(s) and node runs 4 V8 helper threads: after a large recompute they preempt the engine for ms at a time; start node with ${GC_THREADS_FLAG} (NODE_OPTIONS works)`;
}

/** Whether node got `--NAME` (any mix of - and _) on its command line or in NODE_OPTIONS. */
function nodeFlagGiven(name: string, execArgv: readonly string[], nodeOptions: string): boolean {
  const flag = new RegExp(`^--${name.replace(/-/g, '[-_]')}(=|$)`);
  return execArgv.some((a) => flag.test(a)) || nodeOptions.split(/\s+/).some((a) => flag.test(a));
}
