import { describe, expect, it } from 'vitest';
import { type Bucket, decodeBuckets, encodeBuckets } from '../../../../southbound/openflow/codec/buckets.js';
import { OfpCodecError } from '../../../../southbound/openflow/codec/errors.js';
import { codecOf, hex } from './codec-harness.js';

const { enc, dec } = codecOf(encodeBuckets, decodeBuckets, 'GROUP_MOD');

describe('group buckets', () => {
  it('encodes a select bucket (weight) and a fast-failover bucket (watch port/group)', () => {
    const buckets: Bucket[] = [
      {
        weight: 100,
        watchPort: 0xffffffff,
        watchGroup: 0xffffffff,
        actions: [{ type: 'output', port: 1, maxLen: 0 }],
      },
      { weight: 0, watchPort: 2, watchGroup: 7, actions: [{ type: 'group', groupId: 3 }] },
    ];
    const b = enc(buckets);
    expect(b.toString('hex')).toBe(
      hex(
        '0020 0064 ffffffff ffffffff 00000000 | 0000 0010 00000001 0000 000000000000' + // len 32, weight 100
          '0018 0000 00000002 00000007 00000000 | 0016 0008 00000003', // len 24, watch_port 2, watch_group 7
      ).toString('hex'),
    );
    expect(dec(b)).toEqual(buckets);
  });

  it('an empty bucket is its 16-byte header', () => {
    const b: Bucket[] = [{ weight: 0, watchPort: 0xffffffff, watchGroup: 0xffffffff, actions: [] }];
    expect(enc(b).length).toBe(16);
    expect(dec(enc(b))).toEqual(b);
  });

  it('rejects bad bucket lengths, truncation and padding', () => {
    const cases: [string, OfpCodecError['kind']][] = [
      ['000c 0000 ffffffff ffffffff', 'bad-length'],
      ['0014 0000 ffffffff ffffffff 00000000 0000 0000', 'bad-length'],
      ['0020 0000 ffffffff ffffffff 00000000 0016 0008 00000003', 'truncated'],
      ['0010 0000 ffffffff ffffffff 00000001', 'bad-padding'],
    ];
    for (const [h, kind] of cases) {
      let err: unknown;
      try {
        dec(hex(h));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OfpCodecError);
      expect((err as OfpCodecError).kind).toBe(kind);
      expect((err as OfpCodecError).context).toMatch(/^GROUP_MOD/);
    }
  });
});
