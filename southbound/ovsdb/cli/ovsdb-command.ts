import { parseArgs } from 'node:util';
import type { CliCommand, CliIo } from '../../../controller/cli/command.js';
import { UsageError } from '../../../controller/cli/command.js';
import { computeBindings } from '../chassis/bindings.js';
import { type ChassisDesired, desired, type OffloadProfile } from '../chassis/desired.js';
import { planChassis } from '../chassis/plan.js';
import { chassisFacts, stateOf } from '../chassis/state.js';
import { OvsdbClient } from '../client.js';
import { OvsdbLayerError } from '../errors.js';
import { Replica } from '../replica.js';
import {
  VSWITCH_COLUMNS,
  VSWITCH_DB,
  VSWITCH_TABLES,
  type VswitchTable,
  type VswitchTables,
} from '../vswitch.js';

const help = `Usage: weft ovsdb <command> TARGET [options]

  list-dbs TARGET           the databases the OVSDB server holds
  dump TARGET [TABLE...]    the Open_vSwitch rows weft replicates, one JSON object per line
  chassis TARGET            the chassis facts (system-id, encap IP, MTU...) and port bindings
  plan TARGET [options]     what weft's chassis ensure would change, without changing anything
      --bridge NAME  --datapath-type system|netdev  --encap-ip IP  --controller TARGET...
      --profile none|asap2  --vni N...  --vxlan-port PORT

TARGET is unix:PATH, tcp:HOST:PORT or ssl:HOST:PORT (ssl needs WEFT_OVSDB_CA/CERT/KEY files).
`;

/** JSON for OVSDB rows: Maps become objects. */
const toJson = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (x instanceof Map ? Object.fromEntries(x) : x));

async function withReplica<T>(
  target: string,
  io: CliIo,
  fn: (r: Replica<VswitchTables>, c: OvsdbClient) => Promise<T>,
): Promise<T> {
  const env = io.env;
  const tls =
    env.WEFT_OVSDB_CA && env.WEFT_OVSDB_CERT && env.WEFT_OVSDB_KEY
      ? { ca: env.WEFT_OVSDB_CA, cert: env.WEFT_OVSDB_CERT, key: env.WEFT_OVSDB_KEY }
      : undefined;
  const client = await OvsdbClient.connect(target, { tls });
  try {
    const replica = new Replica<VswitchTables>({
      db: VSWITCH_DB,
      tables: VSWITCH_TABLES,
      columns: VSWITCH_COLUMNS,
    });
    await replica.attach(client);
    return await fn(replica, client);
  } finally {
    client.close();
  }
}

function planOptions(args: string[]): Partial<ChassisDesired> {
  try {
    return planOptionsOf(args);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message);
  }
}

function planOptionsOf(args: string[]): Partial<ChassisDesired> {
  const { values } = parseArgs({
    args,
    options: {
      bridge: { type: 'string' },
      'datapath-type': { type: 'string' },
      'encap-ip': { type: 'string' },
      controller: { type: 'string', multiple: true },
      profile: { type: 'string' },
      vni: { type: 'string', multiple: true },
      'vxlan-port': { type: 'string' },
    },
  });
  const out: Partial<ChassisDesired> = {};
  if (values.bridge) out.bridge = values.bridge;
  const dp = values['datapath-type'];
  if (dp) {
    if (dp !== 'system' && dp !== 'netdev')
      throw new UsageError(`--datapath-type must be system or netdev, not "${dp}"`);
    out.datapathType = dp;
  }
  if (values['encap-ip']) out.encapIp = values['encap-ip'];
  if (values.controller) out.controllers = values.controller.map((target) => ({ target }));
  if (values.profile) {
    if (values.profile !== 'none' && values.profile !== 'asap2')
      throw new UsageError(`--profile must be none or asap2`);
    out.profile = values.profile as OffloadProfile;
  }
  if (values.vni) out.vnis = values.vni.map(Number);
  if (values['vxlan-port']) out.vxlanPort = Number(values['vxlan-port']);
  return out;
}

async function runCommand(argv: string[], io: CliIo): Promise<number> {
  const [cmd, target, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h') {
    io.stdout.write(help);
    return cmd ? 0 : 2;
  }
  if (!target) throw new UsageError(`${cmd} needs a TARGET`);
  const out = (line: string) => io.stdout.write(`${line}\n`);
  switch (cmd) {
    case 'list-dbs': {
      const client = await OvsdbClient.connect(target);
      try {
        for (const db of await client.listDbs()) out(db);
      } finally {
        client.close();
      }
      return 0;
    }
    case 'dump':
      return withReplica(target, io, async (replica) => {
        const tables = (rest.length > 0 ? rest : VSWITCH_TABLES) as VswitchTable[];
        for (const t of tables) {
          if (!VSWITCH_TABLES.includes(t))
            throw new UsageError(`unknown table "${t}" (${VSWITCH_TABLES.join(', ')})`);
          for (const row of replica.table(t).values()) out(toJson({ table: t, ...row }));
        }
        return 0;
      });
    case 'chassis':
      return withReplica(target, io, async (replica, client) => {
        const state = stateOf(replica, await client.getSchema(VSWITCH_DB));
        out(toJson({ facts: chassisFacts(state), bindings: [...computeBindings(state).values()] }));
        return 0;
      });
    case 'plan': {
      const opts = planOptions(rest);
      return withReplica(target, io, async (replica, client) => {
        const state = stateOf(replica, await client.getSchema(VSWITCH_DB));
        const d = desired({ encapIp: chassisFacts(state).encapIp, ...opts });
        const plan = planChassis(d, state);
        if (plan.txn.length === 0) out('nothing to change');
        for (const c of plan.changes) out(`change: ${c}`);
        for (const c of plan.conflicts) out(`left alone: ${c}`);
        return 0;
      });
    }
    default:
      throw new UsageError(`unknown ovsdb command "${cmd}"`);
  }
}

export const ovsdbCommand: CliCommand = {
  name: 'ovsdb',
  summary: 'inspect an OVSDB server as weft sees it (dump, chassis facts, dry-run ensure plan)',
  async run(argv, io) {
    try {
      return await runCommand(argv, io);
    } catch (err) {
      if (err instanceof UsageError) {
        io.stderr.write(`weft ovsdb: ${err.message}\n${help}`);
        return 2;
      }
      if (err instanceof OvsdbLayerError || err instanceof RangeError) {
        io.stderr.write(`weft ovsdb: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  },
};
