import { resourceDefs } from '../northbound/routes/resources.js';
import { emptyStatus } from '../northbound/status.js';
const def = resourceDefs(emptyStatus).find((d) => d.kind === 'endpoint')!;
console.log(JSON.stringify(def.schemas.object.properties.status), JSON.stringify(def.schemas.object.properties.createdAt));
