import { createLab } from './topology.js';
const t0 = Date.now();
const lab = await createLab({ name: 'smoke', hypervisors: 2, vms: [
  { name: 'a', mac: '02:00:00:00:00:0a', ip: '10.0.0.1/24', hypervisor: 'hv1' },
  { name: 'b', mac: '02:00:00:00:00:0b', ip: '10.0.0.2/24', hypervisor: 'hv2' },
]});
console.log('up in', Date.now() - t0, 'ms');
try {
  const [h1, h2] = lab.hypervisors;
  const pa = await lab.ofport('a'), pb = await lab.ofport('b');
  console.log('ofports', pa, pb);
  await h1!.ofctl('add-flow', h1!.mgmt('br-int'), `in_port=${pa},actions=set_field:100->tun_id,set_field:10.99.0.2->tun_dst,output:100`);
  await h1!.ofctl('add-flow', h1!.mgmt('br-int'), `in_port=100,tun_id=100,actions=output:${pa}`);
  await h2!.ofctl('add-flow', h2!.mgmt('br-int'), `in_port=${pb},actions=set_field:100->tun_id,set_field:10.99.0.1->tun_dst,output:100`);
  await h2!.ofctl('add-flow', h2!.mgmt('br-int'), `in_port=100,tun_id=100,actions=output:${pb}`);
  await lab.exec('a', 'ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:0b dev eth0');
  await lab.exec('b', 'ip neigh add 10.0.0.1 lladdr 02:00:00:00:00:0a dev eth0');
  console.log(await lab.ping('a', '10.0.0.2', { count: 3, intervalMs: 100 }));
  let t = Date.now();
  console.log(await lab.tcpProbe('a', '10.0.0.2', 8080), Date.now() - t);
  t = Date.now();
  console.log(await lab.tcpProbe('a', '10.0.0.2', 8080), Date.now() - t);
  console.log(await lab.tcpProbe('a', '10.0.0.2', 8081, 1000));
  console.log(await h1!.vsctl('get', 'interface', 'vif-a', 'external_ids'));
} finally {
  const t1 = Date.now();
  await lab.destroy();
  console.log('down in', Date.now() - t1);
}
