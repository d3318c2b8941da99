import { UsageError } from '../../controller/cli/command.js';
import { type SgLog, SgLogSchema } from '../../controller/intent/model.js';
import type { Column } from './format.js';
import type { FieldFlag } from './resource-command.js';

/**
 * A security group's logging on the command line: `weft security-group create|update --log
 * denied|accepted|all|off` sets its `log` field (docs/API.md, "Security-group logging"); `weft
 * sg-log` reads what it logged.
 */

/** The modes, from the model's schema so the CLI cannot drift from what the API takes. */
export const SG_LOG_MODES: readonly SgLog[] = SgLogSchema.anyOf.map((s) => s.const);

/** `--log MODE` (the last one given); anything else is a usage error naming the modes. */
export const parseSgLog = (values: string[]): SgLog => {
  const mode = values.at(-1)!;
  if (!(SG_LOG_MODES as readonly string[]).includes(mode))
    throw new UsageError(`--log must be ${SG_LOG_MODES.join(', ')}, got '${mode}'`);
  return mode as SgLog;
};

export const sgLogFlag: FieldFlag = {
  flag: 'log',
  field: 'log',
  type: 'custom',
  help: "denied (what its endpoints' policy drops), accepted (each new connection its rules admit), all, or off; read with weft sg-log",
  parse: parseSgLog,
};

/** The LOG column of `weft security-group list`: `-` when the group logs nothing (off or absent). */
export const sgLogColumn: Column = {
  header: 'LOG',
  value: (o) => (typeof o.log === 'string' && o.log !== 'off' ? o.log : '-'),
};

/** `weft acl create|update --log on|off`: a network ACL's `log` (each packet it matches, in weft sg-log). */
export const parseAclLog = (values: string[]): boolean => {
  const v = values.at(-1)!;
  if (v === 'on' || v === 'true') return true;
  if (v === 'off' || v === 'false') return false;
  throw new UsageError(`--log must be on or off, got '${v}'`);
};

export const aclLogFlag: FieldFlag = {
  flag: 'log',
  field: 'log',
  type: 'custom',
  help: 'on: log each packet the rule matches (what it drops, or lets through); read with weft sg-log',
  parse: parseAclLog,
};

/** The LOG column of `weft acl list`. */
export const aclLogColumn: Column = { header: 'LOG', value: (o) => (o.log === true ? 'on' : '-') };
