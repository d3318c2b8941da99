import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './exec.js';
import { type ControllerNode, createHaLab, type HaLab, type NetnsProcess } from './ha-lab.js';
import { waitFor } from './hypervisor.js';
import { masterDownIntervalS, renderKeepalivedConf } from './keepalived.js';

/**
 * Proves the HA lab with a stand-in for weft: a tiny HTTP server in each controller namespace
 * whose `/readyz?leader=1` answers 200 while a flag file exists (the test plays the Redis lease)
 * and 503 otherwise; any other path answers with the controller's name. keepalived (configured
 * from deploy/keepalived/) must put the VIP where the check passes, and hypervisors must reach
 * whoever holds it over TCP on the underlay segment.
 */

const STAND_IN = `
const [, , name, flag, port] = process.argv;
const fs = require('node:fs');
require('node:http')
  .createServer((req, res) => {
    if (req.url.startsWith('/readyz')) {
      res.writeHead(fs.existsSync(flag) ? 200 : 503).end();
    } else {
      res.writeHead(200).end(name);
    }
  })
  .listen(Number(port), '0.0.0.0', () => console.log('ready'));
`;
const PORT = 8080;

let ha: HaLab;
const servers = new Map<string, NetnsProcess>();
const flag = (c: ControllerNode) => join(c.dir, 'leader');

/** The controllers whose check passes (normally one: the lease holder). */
function setHealthy(...names: string[]): void {
  for (const c of ha.controllers) {
    if (names.includes(c.name)) writeFileSync(flag(c), 'leader\n');
    else rmSync(flag(c), { force: true });
  }
}
const setLeader = (name: string | null) => setHealthy(...(name ? [name] : []));

async function startStandIn(name: string): Promise<void> {
  const c = ha.controller(name);
  // A marker word after -e says what the process is, in `ps`.
  const proc = await ha.spawn(
    name,
    [process.execPath, '-e', STAND_IN, 'weft-ha-stand-in', name, flag(c), String(PORT)],
    {
      label: 'stand-in',
    },
  );
  servers.set(name, proc);
  await waitFor(`stand-in HTTP server in ${name}`, async () => {
    const code = await ha.exec(name, ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', ha.healthUrl]);
    return code === '200' || code === '503';
  });
}

/** Which controller answers on VIP:8080, asked from a hypervisor namespace over the segment. */
async function whoAnswersVip(hv = 'hv1'): Promise<string> {
  return ha.lab.hv(hv).exec('curl', ['-s', '--max-time', '2', `http://${ha.vip}:${PORT}/whoami`]);
}

function report(what: string, ms: number): void {
  const t = ha.timers;
  console.log(
    `HA lab: ${what}: ${(ms / 1000).toFixed(2)} s (keepalived advert_int ${t.advertIntS} s, check interval ${t.checkIntervalS} s, fall ${t.checkFall}, rise ${t.checkRise}, master down ${masterDownIntervalS(t, 100).toFixed(2)} s)`,
  );
}

describe('HA lab: keepalived moves the VIP to the controller whose leader check passes', () => {
  beforeAll(async () => {
    ha = await createHaLab({
      lab: {
        hypervisors: 2,
        vms: [
          { name: 'a', mac: '02:00:00:00:00:0a', ip: '10.0.0.1/24', hypervisor: 'hv1' },
          { name: 'b', mac: '02:00:00:00:00:0b', ip: '10.0.0.2/24', hypervisor: 'hv2' },
        ],
      },
    });
    await Promise.all(ha.controllers.map((c) => startStandIn(c.name)));
  }, 120_000);

  afterAll(async () => {
    await ha?.destroy();
  });

  it('puts the VIP nowhere while no controller is the leader', async () => {
    setLeader(null);
    await ha.waitForVip(null);
    // Held for longer than the checks need to settle.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await ha.vipHolders()).toEqual([]);
  });

  it('gives the VIP to the leader, and hypervisors reach it by TCP on the segment', async () => {
    setLeader('c1');
    const ms = await ha.waitForVip('c1');
    report('no leader -> c1 holds the VIP', ms);
    await waitFor('hv1 -> VIP answers c1', async () => (await whoAnswersVip('hv1')) === 'c1');
    expect(await whoAnswersVip('hv2')).toBe('c1');
    // Redis is on the same segment, reachable from controllers.
    expect(
      (await ha.exec('c1', ['redis-cli', '-h', ha.redis.ip, '-p', String(ha.redis.port), 'ping'])).trim(),
    ).toBe('PONG');
  });

  it('moves the VIP when leadership flips', async () => {
    const t0 = performance.now();
    setLeader('c2');
    await ha.waitForVip('c2');
    report('leadership c1 -> c2, VIP moved', performance.now() - t0);
    await waitFor('hv1 -> VIP answers c2', async () => (await whoAnswersVip('hv1')) === 'c2');
  });

  it('moves the VIP when the leader process is killed -9', async () => {
    const old = servers.get('c2') as NetnsProcess;
    setLeader('c1'); // the standby wins the lease; the old leader's check keeps failing once it is dead
    const t0 = performance.now();
    await old.kill9();
    expect(old.alive()).toBe(false);
    await ha.waitForVip('c1');
    report('kill -9 of the leader process on c2, VIP on c1', performance.now() - t0);
    await waitFor('hv2 -> VIP answers c1', async () => (await whoAnswersVip('hv2')) === 'c1');
    await startStandIn('c2');
  });

  it('moves the VIP when keepalived itself is killed -9 on the VIP holder', async () => {
    const ka = ha.keepalived('c1') as NetnsProcess;
    // Both checks pass (say c1's weft still believes it leads): c2 turns BACKUP but does not take
    // the VIP while c1 advertises at the same priority.
    setHealthy('c1', 'c2');
    await new Promise((r) => setTimeout(r, 2500));
    expect(await ha.vipHolders()).toEqual(['c1']);
    const t0 = performance.now();
    await ka.kill9();
    await waitFor('c2 holds the VIP', async () => (await ha.vipHolders()).includes('c2'), 15_000);
    report('kill -9 of keepalived on c1, c2 took the VIP', performance.now() - t0);
    // A killed keepalived leaves its address behind, as a crashed host would not: gratuitous ARP
    // from c2 repoints the hypervisors all the same.
    await waitFor('hv1 -> VIP answers c2', async () => (await whoAnswersVip('hv1')) === 'c2');
    // keepalived started again on c1 (no longer the leader) clears the stale VIP.
    setLeader('c2');
    await ha.startKeepalived('c1');
    await ha.waitForVip('c2');
  });

  it('moves the VIP off a controller cut off from the segment, and keeps it off when it returns', async () => {
    // c2 holds the VIP; its link goes down and it loses the lease (it cannot reach Redis).
    await ha.cutOff('c2');
    try {
      const t0 = performance.now();
      setLeader('c1');
      await waitFor('c1 holds the VIP', async () => (await ha.vipHolders()).includes('c1'), 15_000);
      report('c2 cut off, c1 took the VIP', performance.now() - t0);
      await waitFor('hv1 -> VIP answers c1', async () => (await whoAnswersVip('hv1')) === 'c1');
    } finally {
      await ha.reconnect('c2'); // also on failure, so later tests find the segment whole
    }
    await ha.waitForVip('c1');
    expect(await whoAnswersVip('hv2')).toBe('c1');
  });

  it('still carries VM traffic over VXLAN across the re-wired underlay segment', async () => {
    const [hv1, hv2] = [ha.lab.hv('hv1'), ha.lab.hv('hv2')];
    const vni = 100;
    const flows = async (hv: typeof hv1, vm: string, remote: typeof hv1) => {
      const port = await ha.lab.ofport(vm);
      const mgmt = hv.mgmt('br-int');
      await hv.ofctl(
        'add-flow',
        mgmt,
        `in_port=${port},actions=set_field:${vni}->tun_id,set_field:${remote.underlayIp}->tun_dst,output:100`,
      );
      await hv.ofctl('add-flow', mgmt, `in_port=100,tun_id=${vni},actions=output:${port}`);
    };
    await flows(hv1, 'a', hv2);
    await flows(hv2, 'b', hv1);
    const r = await ha.lab.ping('a', '10.0.0.2', { count: 3, intervalMs: 200, timeoutS: 5 });
    expect(r.received).toBe(3);
    // The tunnel packets crossed the segment's bridge through each hypervisor's new port.
    expect(await hv1.vsctl('list-ports', 'br-phy')).toBe('ul1\n');
  });

  it('restarts Redis after kill -9 on the same address, with what it acknowledged', async () => {
    const cli = (...args: string[]) =>
      ha.exec('c2', ['redis-cli', '-h', ha.redis.ip, '-p', String(ha.redis.port), ...args]);
    expect((await cli('SET', 'ha-lab-probe', 'kept')).trim()).toBe('OK');
    const old = ha.redis.process?.pid;
    await ha.redis.kill9();
    await expect(cli('PING')).rejects.toThrow();
    await ha.redis.start();
    expect(ha.redis.process?.pid).not.toBe(old);
    expect((await cli('GET', 'ha-lab-probe')).trim()).toBe('kept');
  });

  it('never touches the root namespace', async () => {
    const addrs = await run('ip', ['-4', '-o', 'addr', 'show']);
    expect(addrs).not.toContain(ha.vip);
    expect(addrs).not.toMatch(/10\.99\.0\./);
  });
});

describe('HA lab: a configuration keepalived refuses', () => {
  it('fails naming the problem and leaves no namespace, process or directory behind', async () => {
    const name = `hafail${process.pid % 1000}`;
    await expect(createHaLab({ lab: { name, hypervisors: 1 }, timers: { advertIntS: 0 } })).rejects.toThrow(
      /keepalived config for weft-c\d .* is invalid: .*Advert interval/s,
    );
    expect(
      (await run('ip', ['netns', 'list'])).split('\n').filter((l) => l.startsWith(`weft-${name}-`)),
    ).toEqual([]);
    expect((await run('ls', ['/tmp'])).split('\n').filter((f) => f.includes(`-${name}-`))).toEqual([]);
    const ps = await run('ps', ['-eo', 'args']);
    expect(ps).not.toMatch(new RegExp(`weft-ha-${name}|/tmp/weft-lab-${name}-`));
  }, 60_000);
});

describe('deploy/keepalived/render-config.sh', () => {
  const node = {
    routerId: 'weft-x',
    iface: 'eth0',
    ip: '10.99.0.201',
    peers: ['10.99.0.202'],
    vip: '10.99.0.200/24',
    priority: 100,
    vrid: 51,
    healthUrl: 'http://127.0.0.1:8080/readyz?leader=1',
    timers: { advertIntS: 0.2, checkIntervalS: 1, checkFall: 2, checkRise: 1 },
  };

  it('fills every placeholder of the template', async () => {
    const conf = await renderKeepalivedConf(node);
    expect(conf).not.toContain('${');
    expect(conf).toMatch(/script ".*\/check-weft-leader\.sh http:\/\/127\.0\.0\.1:8080\/readyz\?leader=1"/);
    expect(conf).toMatch(/10\.99\.0\.200\/24 dev eth0/);
    expect(conf).toMatch(/advert_int 0\.2/);
  });

  it('refuses to render with a variable missing, naming it', async () => {
    await expect(renderKeepalivedConf({ ...node, vip: '' })).rejects.toThrow(/WEFT_VIP is not set/);
  });
});
