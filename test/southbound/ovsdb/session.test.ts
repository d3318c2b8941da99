import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { OvsdbClient } from '../../../southbound/ovsdb/client.js';
import { OvsdbSession } from '../../../southbound/ovsdb/session.js';
import { listen } from '../../../southbound/ovsdb/transport.js';

const dirP = mkdtemp(join(tmpdir(), 'weft-session-'));
afterAll(async () => rm(await dirP, { recursive: true, force: true }));

describe('OvsdbSession', () => {
  it('keeps dialing with backoff until the server appears, and again after it drops us', async () => {
    const path = join(await dirP, 'db.sock');
    const session = new OvsdbSession(`unix:${path}`, { backoffMinMs: 20, backoffMaxMs: 100 });
    const connected: OvsdbClient[] = [];
    let disconnects = 0;
    session.on('connected', (c) => connected.push(c));
    session.on('disconnected', () => disconnects++);
    session.start();
    await new Promise((r) => setTimeout(r, 250)); // several failed dials meanwhile
    expect(connected).toHaveLength(0);
    const accepted: Duplex[] = [];
    const l = await listen(`punix:${path}`, (s) => accepted.push(s));
    try {
      const first = await session.waitConnected();
      expect(connected).toEqual([first]);
      accepted[0]!.destroy(); // the server goes away (e.g. restart)
      await new Promise<void>((resolve) => session.once('connected', () => resolve()));
      expect(disconnects).toBe(1);
      expect(connected).toHaveLength(2);
      expect(connected[0]!.isClosed).toBe(true);
    } finally {
      session.stop();
      await l.close();
    }
  });

  it('stops retrying once stopped', async () => {
    const session = new OvsdbSession(`unix:${join(await dirP, 'never.sock')}`, {
      backoffMinMs: 10,
      backoffMaxMs: 20,
    });
    let connected = 0;
    session.on('connected', () => connected++);
    session.start();
    await new Promise((r) => setTimeout(r, 60));
    session.stop();
    const l = await listen(`punix:${join(await dirP, 'never.sock')}`, () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    await l.close();
    expect(connected).toBe(0);
  });
});
