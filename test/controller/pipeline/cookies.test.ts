import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APP,
  type AppName,
  appOf,
  cookieFor,
  fnv1a32,
  isOwned,
  objectCookie,
} from '../../../controller/pipeline/cookies.js';

/**
 * Cookies are persisted on every switch: a weft upgrade that changed one would rewrite every flow.
 * objectCookie (no string built) must therefore equal cookieFor of the joined key, bit for bit.
 */
describe('flow cookies', () => {
  const apps = Object.keys(APP) as AppName[];

  it('objectCookie(app, kind, id) equals cookieFor(app, `kind/id`) for any key', () => {
    fc.assert(
      fc.property(fc.constantFrom(...apps), fc.string(), fc.string(), (app, kind, id) => {
        expect(objectCookie(app, kind, id)).toBe(cookieFor(app, `${kind}/${id}`));
      }),
      { numRuns: 2000 },
    );
  });

  it('objectCookie stays right when the same id comes under another kind or app, and for empty keys', () => {
    const calls: Array<[AppName, string, string]> = [
      ['overlay', 'endpoint', 'x'],
      ['portSecurity', 'endpoint', 'x'],
      ['acl', 'sg-port', 'x'],
      ['acl', 'endpoint', 'x'],
      ['overlay', 'endpoint', 'y'],
      ['overlay', '', ''],
      ['overlay', 'endpoint', ''],
      ['overlay', '', 'endpoint'],
    ];
    for (const [app, kind, id] of calls)
      expect(objectCookie(app, kind, id)).toBe(cookieFor(app, `${kind}/${id}`));
  });

  it('keeps the layout: tag 0x57, app id, 32-bit FNV-1a of the object key', () => {
    const c = cookieFor('overlay', 'endpoint/ep1');
    expect(c >> 56n).toBe(0x57n);
    expect((c >> 48n) & 0xffn).toBe(BigInt(APP.overlay));
    expect(c & 0xffffffffn).toBe(BigInt(fnv1a32('endpoint/ep1')));
    // FNV-1a 32 of "a" is 0xe40c292c (the published test vector).
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(isOwned(c)).toBe(true);
    expect(appOf(c)).toBe('overlay');
    expect(isOwned(0x1234n)).toBe(false);
  });
});
