import { describe, expect, it } from 'vitest';
import {
  ROUTER_MAX_PORT_FORWARDS,
  type RouterCreate,
  type RouterPortForwardInput,
} from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest, seedExternal } from './router-fixture.js';

/**
 * Port forwards on the SNAT address (DNAT): red's networks web 10.0.0.0/24, db 10.0.1.0/24 (the
 * internal ones) and ext 10.3.0.0/24 (the external one); r1 is on web (10.0.0.1), db (10.0.1.1)
 * and ext (10.3.0.1), SNAT on 10.3.0.1. Endpoint vm holds 10.0.0.5 on web; 10.0.1.77 is a host
 * no endpoint holds (behind a VLAN binding, say).
 */

let svc: IntentService;
redBlueEachTest((s) => {
  svc = s;
}, seedExternal);

const interfaces = [
  { networkId: 'web', ip: '10.0.0.1' },
  { networkId: 'db', ip: '10.0.1.1' },
  { networkId: 'ext', ip: '10.3.0.1' },
];
type Forward = RouterPortForwardInput;
const tcp = (port: number, internalIp: string, internalPort?: number): Forward => ({
  protocol: 'tcp',
  port,
  internalIp,
  ...(internalPort === undefined ? {} : { internalPort }),
});
const udp = (port: number, internalIp: string, internalPort?: number): Forward => ({
  ...tcp(port, internalIp, internalPort),
  protocol: 'udp',
});
const put = (portForwards?: Forward[], more: Partial<RouterCreate> = {}, ip = '10.3.0.1') =>
  svc.put('router', 'r1', {
    tenantId: 'red',
    name: 'r1',
    interfaces,
    snat: portForwards === undefined ? { ip } : { ip, portForwards },
    ...more,
  });
/** The stored router (with its revision), to show a refused write changed nothing. */
const snapshot = () => structuredClone(svc.find('router', 'r1'));

describe('port forwards: accepted', () => {
  it('stores each entry normalised (internalPort filled in), in the order given', async () => {
    const { object } = await put([
      tcp(8080, '10.0.0.5', 80),
      udp(53, '10.0.1.77'),
      tcp(22, '10.0.1.77', 2222),
    ]);
    expect(object.snat).toStrictEqual({
      ip: '10.3.0.1',
      portForwards: [
        { protocol: 'tcp', port: 8080, internalIp: '10.0.0.5', internalPort: 80 },
        { protocol: 'udp', port: 53, internalIp: '10.0.1.77', internalPort: 53 },
        { protocol: 'tcp', port: 22, internalIp: '10.0.1.77', internalPort: 2222 },
      ],
    });
    expect(svc.get('router', 'r1')).toEqual(object);
  });

  it('has no portForwards when omitted or [] (the shape of routers stored before)', async () => {
    expect((await put()).object.snat).toStrictEqual({ ip: '10.3.0.1' });
    const empty = await put([]);
    expect(empty.object.snat).toStrictEqual({ ip: '10.3.0.1' });
    expect('portForwards' in svc.get('router', 'r1').snat!).toBe(false);
  });

  it('takes tcp and udp on the same port, two ports to one internal socket, any host of an internal network', async () => {
    const { object } = await put([
      tcp(53, '10.0.1.77'),
      udp(53, '10.0.1.77'),
      tcp(8443, '10.0.0.5', 443),
      tcp(443, '10.0.0.5'),
    ]);
    expect(object.snat?.portForwards?.map((p) => `${p.protocol}/${p.port}`)).toEqual([
      'tcp/53',
      'udp/53',
      'tcp/8443',
      'tcp/443',
    ]);
    // A dedicated SNAT address forwards as well as the router's own.
    const dedicated = await put([tcp(80, '10.0.0.5')], {}, '10.3.0.200');
    expect(dedicated.object.snat).toStrictEqual({
      ip: '10.3.0.200',
      portForwards: [{ protocol: 'tcp', port: 80, internalIp: '10.0.0.5', internalPort: 80 }],
    });
  });

  it('is idempotent: the same forwards again, internalPort given or defaulted, change nothing', async () => {
    const first = await put([tcp(80, '10.0.0.5')]);
    expect((await put([tcp(80, '10.0.0.5', 80)])).revision).toBe(first.revision);
    expect((await put([tcp(80, '10.0.0.5')])).revision).toBe(first.revision);
    expect((await put([tcp(80, '10.0.0.5', 8080)])).revision).toBeGreaterThan(first.revision);
  });

  it('PATCH without snat keeps them, with snat replaces the whole object, false removes them with SNAT', async () => {
    await put([tcp(80, '10.0.0.5'), udp(53, '10.0.1.77')]);
    const renamed = await svc.update('router', 'r1', { name: 'renamed' });
    expect(renamed.object.snat?.portForwards).toHaveLength(2);
    const moved = await svc.update('router', 'r1', { snat: { ip: '10.3.0.200' } });
    expect(moved.object.snat).toStrictEqual({ ip: '10.3.0.200' });
    const back = await svc.update('router', 'r1', {
      snat: { ip: '10.3.0.1', portForwards: [tcp(443, '10.0.0.5')] },
    });
    expect(back.object.snat?.portForwards).toStrictEqual([
      { protocol: 'tcp', port: 443, internalIp: '10.0.0.5', internalPort: 443 },
    ]);
    const off = await svc.update('router', 'r1', { snat: false });
    expect('snat' in off.object).toBe(false);
    expect('snat' in svc.get('router', 'r1')).toBe(false);
  });

  it(`takes ${ROUTER_MAX_PORT_FORWARDS} entries, refuses one more naming snat.portForwards`, async () => {
    expect(ROUTER_MAX_PORT_FORWARDS).toBe(64);
    const many = (n: number) => Array.from({ length: n }, (_, i) => tcp(1000 + i, '10.0.0.5'));
    const { object } = await put(many(64));
    expect(object.snat?.portForwards).toHaveLength(64);
    const before = snapshot();
    const e = await rejects(
      put(many(65)),
      'invalid',
      /^snat\.portForwards: Expected array length to be less or equal to 64$/,
    );
    expect(e.field).toBe('snat.portForwards');
    expect(svc.find('router', 'r1')).toEqual(before);
  });
});

describe('port forwards: refused, naming the field; nothing changes', () => {
  const refuse = async (
    forwards: Forward[],
    field: string,
    message: RegExp,
    more: Partial<RouterCreate> = {},
  ) => {
    const before = snapshot();
    const e = await rejects(put(forwards, more), 'invalid', message);
    expect(e.field).toBe(field);
    expect(svc.find('router', 'r1')).toEqual(before);
  };

  it('refuses a protocol and port given twice, naming the later .port and the earlier entry', async () => {
    await put();
    await refuse(
      [tcp(8080, '10.0.0.5'), udp(8080, '10.0.0.5'), tcp(8080, '10.0.1.77', 80)],
      'snat.portForwards[2].port',
      /^snat\.portForwards\[2\]\.port: tcp port 8080 is forwarded already by snat\.portForwards\[0\] \(tcp\/8080 -> 10\.0\.0\.5:8080\); one entry per protocol and port/,
    );
    await refuse(
      [udp(53, '10.0.0.5'), udp(53, '10.0.0.5')],
      'snat.portForwards[1].port',
      /^snat\.portForwards\[1\]\.port: udp port 53 is forwarded already by snat\.portForwards\[0\] \(udp\/53 -> 10\.0\.0\.5:53\);/,
    );
  });

  it('refuses ranges that overlap another entry of the protocol, one running backwards, or one moved to other ports', async () => {
    await put();
    const range = (port: number, portEnd: number, internalPort?: number): Forward => ({
      ...tcp(port, '10.0.0.5', internalPort),
      portEnd,
    });
    await refuse(
      [range(8000, 8010), udp(8005, '10.0.0.5'), tcp(8010, '10.0.1.77')],
      'snat.portForwards[2].port',
      /^snat\.portForwards\[2\]\.port: tcp port 8010 is forwarded already by snat\.portForwards\[0\] \(tcp\/8000-8010 -> 10\.0\.0\.5:8000-8010\);/,
    );
    await refuse(
      [tcp(9000, '10.0.0.5', 80), range(8990, 9000)],
      'snat.portForwards[1].port',
      /^snat\.portForwards\[1\]\.port: tcp ports 8990-9000 overlap snat\.portForwards\[0\] \(tcp\/9000 -> 10\.0\.0\.5:80\);/,
    );
    await refuse(
      [range(8010, 8000)],
      'snat.portForwards[0].portEnd',
      /^snat\.portForwards\[0\]\.portEnd: 8000 is below port 8010; a range runs from port up to portEnd/,
    );
    await refuse(
      [range(8000, 8010, 9000)],
      'snat.portForwards[0].internalPort',
      /^snat\.portForwards\[0\]\.internalPort: a range \(8000-8010\) goes to the same ports of the internal host; conntrack cannot move it to 9000-9010/,
    );
  });

  it('stores a range with its own ports (internalPort its first), and a one-port range as one port', async () => {
    const { object } = await put([
      { ...tcp(8000, '10.0.0.5'), portEnd: 8010 },
      { ...udp(5000, '10.0.1.77', 5000), portEnd: 5100 },
      { ...tcp(7000, '10.0.0.5'), portEnd: 7000 },
      tcp(8011, '10.0.1.77'),
    ]);
    expect(object.snat?.portForwards).toEqual([
      { protocol: 'tcp', port: 8000, portEnd: 8010, internalIp: '10.0.0.5', internalPort: 8000 },
      { protocol: 'udp', port: 5000, portEnd: 5100, internalIp: '10.0.1.77', internalPort: 5000 },
      { protocol: 'tcp', port: 7000, internalIp: '10.0.0.5', internalPort: 7000 },
      { protocol: 'tcp', port: 8011, internalIp: '10.0.1.77', internalPort: 8011 },
    ]);
  });

  it('refuses an internal address that is not IPv4', async () => {
    await put();
    await refuse(
      [tcp(80, '10.0.0.5'), tcp(81, 'nope')],
      'snat.portForwards[1].internalIp',
      /^snat\.portForwards\[1\]\.internalIp: 'nope' is not an IPv4 address$/,
    );
    await refuse(
      [tcp(80, '10.0.0.0/24')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: '10\.0\.0\.0\/24' is not an IPv4 address$/,
    );
    await refuse(
      [tcp(80, 'FD00:0::5')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: fd00::5 is IPv6; port forwards are IPv4, as SNAT is$/,
    );
    await refuse([tcp(80, '::ffff:10.0.0.5')], 'snat.portForwards[0].internalIp', /::ffff:a00:5 is IPv6;/);
  });

  it("refuses an address on the external network or on none of the router's networks, listing the internal subnets", async () => {
    await put();
    await refuse(
      [tcp(80, '10.3.0.9')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: 10\.3\.0\.9 is in network 'ext', the external network of this router's SNAT \(snat\.ip 10\.3\.0\.1\); a port forward goes to a host on one of its internal networks \(10\.0\.0\.0\/24, 10\.0\.1\.0\/24\)$/,
    );
    // The SNAT address itself is on the external network.
    await refuse([tcp(80, '10.3.0.1')], 'snat.portForwards[0].internalIp', /10\.3\.0\.1 is in network 'ext'/);
    await refuse(
      [tcp(80, '192.168.0.9')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: 192\.168\.0\.9 is outside the IPv4 subnets of the router's internal networks \(10\.0\.0\.0\/24, 10\.0\.1\.0\/24\); a port forward goes to a host on one of them$/,
    );
    // app exists but the router is not on it.
    await refuse(
      [tcp(80, '10.0.2.5')],
      'snat.portForwards[0].internalIp',
      /10\.0\.2\.5 is outside the IPv4 subnets/,
    );
  });

  it("refuses a network or broadcast address, or the router's own address", async () => {
    await put();
    await refuse(
      [tcp(80, '10.0.0.0')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: 10\.0\.0\.0 is the network address of 10\.0\.0\.0\/24, not a usable address$/,
    );
    await refuse(
      [tcp(80, '10.0.1.255')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: 10\.0\.1\.255 is the broadcast address of 10\.0\.1\.0\/24, not a usable address$/,
    );
    await refuse(
      [tcp(80, '10.0.1.1')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: 10\.0\.1\.1 is this router's own address on network 'db'; a port forward goes to a host behind the router$/,
    );
  });

  it('refuses the fixed address of a floating IP (reach it at its floating IP), or a floating IP', async () => {
    await put();
    await refuse(
      [tcp(80, '10.0.1.77'), tcp(443, '10.0.0.5')],
      'snat.portForwards[1].internalIp',
      /^snat\.portForwards\[1\]\.internalIp: 10\.0\.0\.5 is the fixed address of floatingIps\[0\] \(10\.3\.0\.50 -> 10\.0\.0\.5\); that host has its own address on the external network: reach it at its floating IP 10\.3\.0\.50 rather than by a port forward$/,
      { floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }] },
    );
    // A floating IP on db (its external network for 1:1 NAT, an internal one for SNAT).
    await refuse(
      [tcp(80, '10.0.1.50')],
      'snat.portForwards[0].internalIp',
      /^snat\.portForwards\[0\]\.internalIp: 10\.0\.1\.50 is floatingIps\[0\]\.ip, a floating IP of this router; a port forward goes to a host behind the router$/,
      { floatingIps: [{ ip: '10.0.1.50', fixedIp: '10.0.0.6' }] },
    );
    // Without the clash, both are fine together.
    const { object } = await put([tcp(80, '10.0.1.77')], {
      floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }],
    });
    expect(object.floatingIps).toEqual([{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }]);
    expect(object.snat?.portForwards).toHaveLength(1);
  });

  it('keeps the SNAT refusals as they were, before the port forwards are looked at', async () => {
    await put();
    await refuse(
      [tcp(80, 'nope')],
      'snat.ip',
      /^snat\.ip: 192\.168\.0\.9 is outside the IPv4 subnets of the router's networks/,
      { snat: { ip: '192.168.0.9', portForwards: [tcp(80, 'nope')] } },
    );
  });

  it('refuses bad shapes naming the field inside the entry', async () => {
    await put();
    const shape = async (entry: unknown, field: string, message: RegExp) => {
      const before = snapshot();
      const e = await rejects(put([entry as Forward]), 'invalid', message);
      expect(e.field).toBe(field);
      expect(svc.find('router', 'r1')).toEqual(before);
    };
    await shape(
      tcp(0, '10.0.0.5'),
      'snat.portForwards[0].port',
      /^snat\.portForwards\[0\]\.port: Expected integer to be greater or equal to 1$/,
    );
    await shape(tcp(65536, '10.0.0.5'), 'snat.portForwards[0].port', /less or equal to 65535$/);
    await shape(tcp(80, '10.0.0.5', 0), 'snat.portForwards[0].internalPort', /greater or equal to 1$/);
    await shape(tcp(80.5, '10.0.0.5'), 'snat.portForwards[0].port', /Expected integer$/);
    await shape(
      { ...tcp(80, '10.0.0.5'), portEnd: 65536 },
      'snat.portForwards[0].portEnd',
      /less or equal to 65535$/,
    );
    await shape(
      { ...tcp(80, '10.0.0.5'), portEnd: '90' },
      'snat.portForwards[0].portEnd',
      /Expected integer$/,
    );
    await shape(
      { ...tcp(80, '10.0.0.5'), protocol: 'icmp' },
      'snat.portForwards[0].protocol',
      /must be one of "tcp", "udp"$/,
    );
    await shape(
      { protocol: 'tcp', internalIp: '10.0.0.5' },
      'snat.portForwards[0].port',
      /Expected required property$/,
    );
    await shape({ ...tcp(80, '10.0.0.5'), host: 'x' }, 'snat.portForwards[0].host', /is not a known field$/);
    // An unknown field of snat itself keeps the union's message, as before port forwards.
    const e = await rejects(
      put(undefined, { snat: { ip: '10.3.0.1', forwards: [] } as unknown as RouterCreate['snat'] }),
      'invalid',
      /^snat: Expected union value$/,
    );
    expect(e.field).toBe('snat');
  });
});
