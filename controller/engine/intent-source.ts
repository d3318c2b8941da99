import type { IntentView } from '../../apps/build-view.js';
import type { Kind, ObjectOf } from '../intent/model.js';
import type { IntentService } from '../intent/service.js';
import type { IntentSource } from './engine.js';

const PAGE = 10_000;

/** Every object of a kind, across pages. */
export function allOf<K extends Kind>(intents: IntentService, kind: K): Array<ObjectOf[K]> {
  const out: Array<ObjectOf[K]> = [];
  let cursor: string | undefined;
  do {
    const page = intents.list(kind, { limit: PAGE, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/**
 * The engine's read of the intent service: the objects the apps need, at the service's current
 * revision (its reads are synchronous, from one in-memory copy, so the view is consistent).
 */
export function intentSource(intents: IntentService): IntentSource {
  return {
    revision: () => intents.revision(),
    view: (): IntentView => ({
      networks: allOf(intents, 'network'),
      endpoints: allOf(intents, 'endpoint'),
      chassis: allOf(intents, 'chassis'),
      vlanBindings: allOf(intents, 'vlanBinding'),
      networkAcls: allOf(intents, 'networkAcl'),
      securityGroups: allOf(intents, 'securityGroup'),
      routers: allOf(intents, 'router'),
      mirrors: allOf(intents, 'mirror'),
      tenants: allOf(intents, 'tenant'),
    }),
    onChange: (cb) => {
      intents.onChange((ev) => cb(ev.changes));
    },
  };
}
