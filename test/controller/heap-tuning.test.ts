import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  GC_THREADS_FLAG,
  gcThreadsAdvice,
  YOUNG_GENERATION_FLAG,
  youngGenerationTuned,
} from '../../controller/heap-tuning.js';

const run = promisify(execFile);

/** The new space of a fresh node after allocating 3M small objects that survive. */
const probe = `
const v8 = require('node:v8');
if (process.argv[1] === 'set') v8.setFlagsFromString('${YOUNG_GENERATION_FLAG}');
const keep = []; for (let i = 0; i < 3e6; i++) keep.push({ i });
const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
console.log(Math.round(s.space_size / 1e6));
`;
const newSpaceMb = async (nodeArgs: string[], arg = '') =>
  Number((await run(process.execPath, [...nodeArgs, '-e', probe, arg])).stdout.trim());

describe('the young generation flag', () => {
  it('works on the command line and not from inside the process (why the launchers pass it)', async () => {
    const flagged = await newSpaceMb([YOUNG_GENERATION_FLAG]);
    const inside = await newSpaceMb([], 'set');
    expect(flagged).toBeGreaterThanOrEqual(100);
    expect(inside).toBeLessThan(flagged / 2);
  }, 30_000);

  it('is recognised on the command line and in NODE_OPTIONS, whatever the spelling', () => {
    expect(youngGenerationTuned([YOUNG_GENERATION_FLAG], '')).toBe(true);
    expect(youngGenerationTuned(['--max_semi_space_size=32'], '')).toBe(true);
    expect(youngGenerationTuned([], `--enable-source-maps ${YOUNG_GENERATION_FLAG}`)).toBe(true);
    expect(youngGenerationTuned(['--max-semi-space'], '--max-old-space-size=4096')).toBe(false);
  });
});

describe('the V8 helper-thread advice', () => {
  it('advises one helper thread on 1-2 cores unless the pool size is set, however', () => {
    expect(gcThreadsAdvice(2, [], '')).toMatch(
      /^this machine has 2 core\(s\) .* start node with --v8-pool-size=1/,
    );
    expect(gcThreadsAdvice(1, ['--max-semi-space-size=64'], '')).toContain(GC_THREADS_FLAG);
    expect(gcThreadsAdvice(2, [GC_THREADS_FLAG], '')).toBeUndefined();
    expect(gcThreadsAdvice(2, [], '--v8_pool_size=2')).toBeUndefined();
    expect(gcThreadsAdvice(4, [], '')).toBeUndefined();
  });
});
