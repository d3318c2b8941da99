import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkComposeDoc, checkComposeText } from './compose-validate.js';

/**
 * docker-compose.yml cannot be started in CI (no Docker engine), so it is validated against the
 * Compose Specification schema, and the parts weft's HA relies on are checked one by one: Redis
 * durability, the two controllers' HA flags, keepalived's privileges and its leader check.
 */

const root = join(import.meta.dirname, '..', '..');
const read = (rel: string) => readFileSync(join(root, rel), 'utf8');
const composeText = read('docker-compose.yml');
const keepalivedDir = 'deploy/keepalived';
/** The leader-only health check: 200 on the leader, 503 elsewhere. */
const LEADER_HEALTH_PATH = '/readyz?leader=1';

type Service = {
  command?: string[];
  environment?: Record<string, string | number>;
  network_mode?: string;
  cap_add?: string[];
  build?: string;
  profiles?: string[];
};
type Compose = { services: Record<string, Service> };

function compose(): Compose {
  const r = checkComposeText(composeText);
  expect(r.errors).toEqual([]);
  return r.doc as Compose;
}
const service = (name: string): Service => {
  const s = compose().services[name];
  if (!s) throw new Error(`docker-compose.yml has no service '${name}'`);
  return s;
};
/** `--flag=value` or `--flag value` from a command list. */
function flag(cmd: string[] | undefined, name: string): string | undefined {
  const args = cmd ?? [];
  for (const [i, a] of args.entries()) {
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
    if (a === `--${name}`) return args[i + 1];
  }
  return undefined;
}

describe('docker-compose.yml against the Compose Specification schema', () => {
  it('is valid', () => {
    const r = checkComposeText(composeText);
    expect(r.errors).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('rejects a copy with a misspelt service key, naming it', () => {
    const broken = composeText.replace('network_mode: host', 'network_mod: host');
    expect(broken).not.toBe(composeText);
    const r = checkComposeText(broken);
    expect(r.ok).toBe(false);
    expect(r.errors.join('\n')).toMatch(
      /\/services\/weft-a must NOT have additional properties 'network_mod'/,
    );
  });

  it('rejects an unknown top-level key (only x- extensions are free)', () => {
    const r = checkComposeText(`${composeText}\nservicez: {}\n`);
    expect(r.ok).toBe(false);
    expect(r.errors.join('\n')).toMatch(/additional properties 'servicez'/);
  });

  it('rejects a value of the wrong type', () => {
    const doc = structuredClone(compose()) as unknown as {
      services: Record<string, Record<string, unknown>>;
    };
    (doc.services['keepalived-a'] as Record<string, unknown>).cap_add = 'NET_ADMIN';
    const r = checkComposeDoc(doc);
    expect(r.ok).toBe(false);
    expect(r.errors.join('\n')).toMatch(/\/services\/keepalived-a\/cap_add must be array/);
  });

  it('rejects an unquoted ": " that turns a command word into a map', () => {
    const broken = composeText.replace(
      /- "(fetch\('http:\/\/127\.0\.0\.1:8080\/healthz'\)[^"]*)"/,
      (_m, js: string) => `- ${js}`,
    );
    expect(broken).not.toBe(composeText);
    const r = checkComposeText(broken);
    expect(r.ok).toBe(false);
    expect(r.errors.join('\n')).toMatch(/healthcheck\/test/);
  });

  it('reports a YAML syntax error instead of throwing', () => {
    const r = checkComposeText('services:\n  a: [unclosed\n');
    expect(r.ok).toBe(false);
    expect(r.errors[0]).toMatch(/^YAML: /);
  });
});

describe('what the HA pair relies on', () => {
  it('Redis keeps an append-only file fsynced before each acknowledged write', () => {
    const cmd = service('redis').command ?? [];
    expect(cmd[0]).toBe('redis-server');
    expect(flag(cmd, 'appendonly')).toBe('yes');
    // docs/STORE.md: `always` is what "acknowledged means durable" needs.
    expect(flag(cmd, 'appendfsync')).toBe('always');
    expect(flag(cmd, 'requirepass')).toBeTruthy();
  });

  it('two weft instances share the Redis store and elect a leader through it', () => {
    const ids = new Set<string | undefined>();
    for (const name of ['weft-a', 'weft-b']) {
      const s = service(name);
      expect(s.command?.[0]).toBe('serve');
      expect(flag(s.command, 'store')).toMatch(/^redis:\/\//);
      expect(flag(s.command, 'ha')).toBe('redis');
      expect(flag(s.command, 'ha-mode')).toMatch(/roles|vip/);
      expect(flag(s.command, 'advertise-openflow')).toMatch(/^tcp:.+:6653$/);
      expect(flag(s.command, 'advertise-ovsdb')).toMatch(/^tcp:.+:6640$/);
      expect(flag(s.command, 'api')).toBe('0.0.0.0:8080');
      expect(s.network_mode).toBe('host');
      ids.add(flag(s.command, 'instance-id'));
    }
    expect(ids.size).toBe(2);
  });

  it('the Dockerfiles copy files that exist, and the weft image runs bin/weft.js', () => {
    for (const [dockerfile, context] of [
      ['Dockerfile', '.'],
      [`${keepalivedDir}/Dockerfile`, keepalivedDir],
    ] as const) {
      const text = read(dockerfile);
      const sources = [...text.matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm)].flatMap((m) =>
        (m[1] ?? '').split(/\s+/),
      );
      expect(sources.length, dockerfile).toBeGreaterThan(0);
      for (const src of sources)
        expect(existsSync(join(root, context, src)), `${dockerfile}: ${src}`).toBe(true);
    }
    // The young-generation flag is node's, on its command line (controller/heap-tuning.ts).
    expect(read('Dockerfile')).toMatch(/ENTRYPOINT \["node", "--max-semi-space-size=64", "bin\/weft\.js"\]/);
    expect(service('weft-a').build).toBe('.');
  });

  it('keepalived runs on the host network with NET_ADMIN and follows the leader check', () => {
    const a = service('keepalived-a');
    const b = service('keepalived-b');
    for (const k of [a, b]) {
      expect(k.network_mode).toBe('host');
      expect(k.cap_add).toEqual(expect.arrayContaining(['NET_ADMIN', 'NET_RAW']));
      expect(String(k.environment?.WEFT_HEALTH_URL)).toMatch(/^http:\/\/127\.0\.0\.1:8080\//);
      expect(String(k.environment?.WEFT_HEALTH_URL).endsWith(LEADER_HEALTH_PATH)).toBe(true);
      expect(k.build).toBe(keepalivedDir);
    }
    // Unicast VRRP: each node's peer is the other's source address (the same variable).
    const variable = (v: unknown) => /^\$\{(\w+)/.exec(String(v))?.[1];
    expect(variable(a.environment?.KEEPALIVED_UNICAST_SRC)).toBe('WEFT_A_IP');
    expect(variable(b.environment?.KEEPALIVED_UNICAST_SRC)).toBe('WEFT_B_IP');
    expect(variable(a.environment?.KEEPALIVED_UNICAST_PEER)).toBe('WEFT_B_IP');
    expect(variable(b.environment?.KEEPALIVED_UNICAST_PEER)).toBe('WEFT_A_IP');
    expect(flag(service('weft-a').command, 'advertise-openflow')).toContain('${WEFT_A_IP');
    expect(flag(service('weft-b').command, 'advertise-openflow')).toContain('${WEFT_B_IP');
    expect(a.profiles).toEqual(service('weft-a').profiles);
    expect(b.profiles).toEqual(service('weft-b').profiles);
  });

  it('every placeholder of the keepalived template is set by compose or has a default', () => {
    const template = read(`${keepalivedDir}/keepalived.conf.tmpl`);
    const render = read(`${keepalivedDir}/render-config.sh`);
    const used = new Set([...template.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]));
    const defaulted = new Set([...render.matchAll(/: "\$\{([A-Z_][A-Z0-9_]*):=/g)].map((m) => m[1]));
    expect(used.size).toBeGreaterThan(5);
    for (const name of ['keepalived-a', 'keepalived-b']) {
      const env = service(name).environment ?? {};
      const missing = [...used].filter((v) => v && !(v in env) && !defaulted.has(v));
      expect(missing, `${name}: template variables without a value`).toEqual([]);
    }
  });

  it('the keepalived config runs a check script that exists, is executable and asks for the leader', () => {
    const template = read(`${keepalivedDir}/keepalived.conf.tmpl`);
    const render = read(`${keepalivedDir}/render-config.sh`);
    expect(template).toMatch(/script "\$\{KEEPALIVED_CHECK_SCRIPT\} \$\{WEFT_HEALTH_URL\}"/);
    expect(template).toMatch(/track_script \{\s*weft_leader\s*\}/);
    const scriptDefault = /KEEPALIVED_CHECK_SCRIPT:=\$here\/([\w.-]+)\}/.exec(render)?.[1];
    expect(scriptDefault).toBe('check-weft-leader.sh');
    for (const file of ['check-weft-leader.sh', 'render-config.sh', 'run-keepalived.sh']) {
      const path = join(root, keepalivedDir, file);
      expect(() => accessSync(path, constants.X_OK), `${file} must be executable`).not.toThrow();
    }
    const check = read(`${keepalivedDir}/check-weft-leader.sh`);
    expect(check).toContain(`http://127.0.0.1:8080${LEADER_HEALTH_PATH}`);
    expect(check).toMatch(/curl .*--fail/);
    expect(render).toContain(`WEFT_HEALTH_URL:=http://127.0.0.1:8080${LEADER_HEALTH_PATH}`);
    // The image ships the scripts and the template where render-config.sh looks for them.
    const dockerfile = read(`${keepalivedDir}/Dockerfile`);
    expect(dockerfile).toMatch(/COPY .*check-weft-leader\.sh.*render-config\.sh.*\/etc\/keepalived\/weft\//);
    expect(dockerfile).toMatch(/COPY .*keepalived\.conf\.tmpl \/etc\/keepalived\/weft\//);
    // The path part is a route weft serves.
    const routes = read('northbound/routes/health.ts');
    expect(routes).toContain(`'${LEADER_HEALTH_PATH.split('?')[0]}'`);
  });
});
