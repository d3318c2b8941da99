import { describe, expect, it } from 'vitest';
import { UsageError } from '../../controller/cli/command.js';
import { parsePortForward, parsePortForwards, snatText } from '../../northbound/cli/port-forward-flags.js';
import { snatCell } from '../../northbound/cli/router-cli.js';

/** How `weft router` reads `--port-forward PROTO/PORT[-END]=IP[:PORT]` and prints port forwards (pure). */

const fwd = (protocol: 'tcp' | 'udp', port: number, internalIp: string, internalPort = port) => ({
  protocol,
  port,
  internalIp,
  internalPort,
});

describe('parsePortForward', () => {
  it('reads PROTO/PORT=IP[:PORT]; the internal port only when given', () => {
    expect(parsePortForward('tcp/8080=10.0.0.5:80')).toStrictEqual({
      protocol: 'tcp',
      port: 8080,
      internalIp: '10.0.0.5',
      internalPort: 80,
    });
    expect(parsePortForward('udp/53=10.0.0.9')).toStrictEqual({
      protocol: 'udp',
      port: 53,
      internalIp: '10.0.0.9',
    });
    expect(parsePortForward('TCP/1=10.0.0.9:65535')).toStrictEqual({
      protocol: 'tcp',
      port: 1,
      internalIp: '10.0.0.9',
      internalPort: 65535,
    });
  });

  it('refuses bad syntax as a usage error naming the flag, the reason and an example', () => {
    const example =
      '; expected PROTO/PORT[-END]=IP[:PORT], e.g. tcp/8080=10.0.0.5:80, udp/53=10.0.0.9 or udp/10000-10100=10.0.0.9';
    const cases: Array<[string, string]> = [
      ['8080=10.0.0.5', 'missing the protocol (tcp/8080 or udp/8080)'],
      ['tcp/8080', 'no =IP saying where the port goes'],
      ['icmp/0=10.0.0.5', "'icmp' is not a protocol that can be forwarded (tcp or udp)"],
      ['sctp/80=10.0.0.5', "'sctp' is not a protocol that can be forwarded (tcp or udp)"],
      ['tcp/0=10.0.0.5', "'0' is not a port (1-65535)"],
      ['tcp/65536=10.0.0.5', "'65536' is not a port (1-65535)"],
      ['tcp/http=10.0.0.5', "'http' is not a port (1-65535)"],
      ['tcp/=10.0.0.5', "'' is not a port (1-65535)"],
      ['tcp/80=10.0.0.5:0', "'0' is not a port (1-65535)"],
      ['tcp/80=10.0.0.5:', "'' is not a port (1-65535)"],
      ['tcp/80=10.0.0.5:8o', "'8o' is not a port (1-65535)"],
      ['tcp/80=10.0.0.0/24', "'10.0.0.0/24' is a CIDR: a port is forwarded to one address (no /)"],
      ['tcp/80=fd00::5', "'fd00::5' is IPv6: port forwards are IPv4, as SNAT is"],
      ['tcp/80=[fd00::5]:80', "'[fd00::5]:80' is IPv6: port forwards are IPv4, as SNAT is"],
      ['tcp/80=web', "'web' is not an IPv4 address"],
      ['tcp/80=', "'' is not an IPv4 address"],
      ['tcp/80=10.0.0.300', "'10.0.0.300' is not an IPv4 address"],
      ['udp/10100-10000=10.0.0.9', "'10100-10000' runs backwards: give the lower port first"],
      ['udp/10000-=10.0.0.9', "'' is not a port (1-65535)"],
      ['udp/10000-70000=10.0.0.9', "'70000' is not a port (1-65535)"],
      ['udp/-10=10.0.0.9', "'' is not a port (1-65535)"],
      [
        'udp/10000-10100=10.0.0.9:20000',
        "a range goes to the same ports of the internal host: leave out ':20000'",
      ],
    ];
    for (const [text, why] of cases) {
      expect(() => parsePortForward(text), text).toThrow(`--port-forward '${text}': ${why}${example}`);
      expect(() => parsePortForward(text), text).toThrow(UsageError);
    }
  });

  it('reads a range PORT-END: each port to itself (the internal port may only repeat the first)', () => {
    expect(parsePortForward('udp/10000-10100=10.0.0.9')).toStrictEqual({
      protocol: 'udp',
      port: 10000,
      portEnd: 10100,
      internalIp: '10.0.0.9',
    });
    expect(parsePortForward('tcp/8000-8010=10.0.0.5:8000')).toStrictEqual({
      protocol: 'tcp',
      port: 8000,
      portEnd: 8010,
      internalIp: '10.0.0.5',
      internalPort: 8000,
    });
    // A range of one port is that port.
    expect(parsePortForward('tcp/22-22=10.0.0.5')).toStrictEqual({
      protocol: 'tcp',
      port: 22,
      internalIp: '10.0.0.5',
    });
  });

  it('takes the list whole; none alone empties it', () => {
    expect(parsePortForwards(['tcp/80=10.0.0.5', 'udp/53=10.0.0.9:5353'])).toStrictEqual([
      { protocol: 'tcp', port: 80, internalIp: '10.0.0.5' },
      { protocol: 'udp', port: 53, internalIp: '10.0.0.9', internalPort: 5353 },
    ]);
    expect(parsePortForwards(['none'])).toStrictEqual([]);
    expect(() => parsePortForwards(['none', 'tcp/80=10.0.0.5'])).toThrow(
      '--port-forward none means no port forwards; give it alone',
    );
  });
});

describe('snatCell and snatText', () => {
  it('shows the address and the count of port forwards when there are some', () => {
    expect(snatCell({})).toBe('-');
    expect(snatCell({ snat: { ip: '192.0.2.1' } })).toBe('192.0.2.1');
    expect(snatCell({ snat: { ip: '192.0.2.1', portForwards: [fwd('tcp', 80, '10.0.0.5')] } })).toBe(
      '192.0.2.1 +1 fwd',
    );
    expect(
      snatCell({
        snat: { ip: '192.0.2.1', portForwards: [fwd('tcp', 80, '10.0.0.5'), fwd('udp', 53, '10.0.0.9')] },
      }),
    ).toBe('192.0.2.1 +2 fwd');
  });

  it('show: ip=IP, then one port forward per line as --port-forward takes it', () => {
    expect(snatText({ ip: '192.0.2.1' })).toBe('ip=192.0.2.1');
    expect(
      snatText({
        ip: '192.0.2.1',
        portForwards: [fwd('tcp', 8080, '10.0.0.5', 80), fwd('udp', 53, '10.0.0.9')],
      }),
    ).toBe('ip=192.0.2.1 portForwards:\n  - tcp/8080=10.0.0.5:80\n  - udp/53=10.0.0.9:53');
    const range = { ...fwd('udp', 10000, '10.0.0.9', 10000), portEnd: 10100 };
    expect(snatText({ ip: '192.0.2.1', portForwards: [range] })).toBe(
      'ip=192.0.2.1 portForwards:\n  - udp/10000-10100=10.0.0.9',
    );
  });
});
