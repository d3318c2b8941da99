import { describe, expect, it } from 'vitest';
import { PendingFacts } from '../../../controller/engine/facts-delta.js';

const delta = (ifaces: string[], chassis: string[] = []) => ({
  ifaces: new Set(ifaces),
  chassis: new Set(chassis),
});

describe('PendingFacts', () => {
  it('is empty until something is reported, and empty again after take', () => {
    const p = new PendingFacts();
    expect(p.take()).toBeUndefined();
    p.add(delta([]));
    expect(p.take()).toEqual(delta([]));
    expect(p.take()).toBeUndefined();
  });

  it('merges deltas reported between two computations', () => {
    const p = new PendingFacts();
    p.add(delta(['a'], ['hv1']));
    p.add(delta(['b', 'a'], ['hv2']));
    expect(p.take()).toEqual(delta(['a', 'b'], ['hv1', 'hv2']));
  });

  it('turns into "compare everything" once a report came without a delta, until taken', () => {
    const p = new PendingFacts();
    p.add(delta(['a']));
    p.add(undefined);
    p.add(delta(['b']));
    expect(p.take()).toBe('all');
    p.add(delta(['c']));
    expect(p.take()).toEqual(delta(['c']));
  });

  it('does not let a later report change a delta already taken', () => {
    const p = new PendingFacts();
    p.add(delta(['a']));
    const taken = p.take();
    p.add(delta(['b']));
    expect(taken).toEqual(delta(['a']));
  });
});
