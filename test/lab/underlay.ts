import { UNDERLAY_IFACE } from './hypervisor.js';
import { ipBatch } from './lab-netns.js';

/**
 * The underlay: the "physical" network between hypervisors, made of veths that never touch the
 * root namespace (each pair is created inside a lab namespace with its peer sent straight into
 * another). Two hypervisors share one veth pair; three or more hang off a Linux bridge that lives
 * in a namespace of its own. Each hypervisor sees its end as `ul0`, which becomes a br-phy port.
 *
 * `underlayNs` is required (and must exist) when there are 3 or more hypervisors.
 */
export async function wireUnderlay(hypervisorNs: readonly string[], underlayNs?: string): Promise<void> {
  const [first, second] = hypervisorNs;
  if (first === undefined) return;
  if (second === undefined) {
    // A lone hypervisor still gets a ul0 so that br-phy looks the same everywhere (there is no
    // dummy driver on every kernel: a veth whose peer stays unused does the same).
    await ipBatch(first, [`link add ${UNDERLAY_IFACE} type veth peer name ${UNDERLAY_IFACE}-peer`]);
    return;
  }
  if (hypervisorNs.length === 2) {
    await ipBatch(first, [
      `link add ${UNDERLAY_IFACE} type veth peer name ${UNDERLAY_IFACE} netns ${second}`,
    ]);
    return;
  }
  if (!underlayNs) throw new Error('an underlay namespace is needed for 3 or more hypervisors');
  const lines = ['link add br0 type bridge stp_state 0 forward_delay 0', 'link set br0 up'];
  hypervisorNs.forEach((ns, i) => {
    const port = `p${i + 1}`;
    lines.push(`link add ${port} type veth peer name ${UNDERLAY_IFACE} netns ${ns}`);
    lines.push(`link set ${port} master br0`, `link set ${port} up`);
  });
  await ipBatch(underlayNs, lines);
}
