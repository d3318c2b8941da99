/** ovs-ofctl text form of flows and groups: print like dump-flows / dump-groups, parse add-flow syntax. */

export type { FlowText, GroupText, GroupType } from './flow-text.js';
export { formatAction, formatActions, formatInstructions } from './format-actions.js';
export { formatFlow, formatGroup } from './format-flow.js';
export { formatMatch, OFP_DEFAULT_PRIORITY } from './format-match.js';
export { parseActionList, parseInstructions } from './parse-actions.js';
export { parseFlow, parseGroup } from './parse-flow.js';
export { OfTextError } from './text-error.js';
