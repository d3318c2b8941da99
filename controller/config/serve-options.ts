import { defaultSessionOptions } from '../../southbound/openflow/session/options.js';

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The options of `weft serve`, one entry each: flag, environment variable, default and help line
 * (serve-config.ts parses and checks them, and prints the help from them).
 */

/** One option: its flag, environment variable, default and help line. */
export interface OptionSpec {
  flag: string;
  env: string;
  arg: string;
  help: string;
  def?: string;
  multiple?: boolean;
}

export const specs: OptionSpec[] = [
  {
    flag: 'openflow',
    env: 'WEFT_OPENFLOW',
    arg: 'ADDR',
    def: 'tcp:0.0.0.0:6653',
    multiple: true,
    help: 'listen for switches: tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH (repeatable; env: comma-separated)',
  },
  {
    flag: 'tls-ca',
    env: 'WEFT_TLS_CA',
    arg: 'FILE',
    help: 'CA certificate that switch certificates must chain to',
  },
  { flag: 'tls-cert', env: 'WEFT_TLS_CERT', arg: 'FILE', help: "the controller's certificate (PEM)" },
  { flag: 'tls-key', env: 'WEFT_TLS_KEY', arg: 'FILE', help: "the controller's private key (PEM)" },
  {
    flag: 'ovsdb',
    env: 'WEFT_OVSDB',
    arg: 'ADDR',
    def: 'ptcp:6640',
    help: 'OVSDB manager listener: ptcp:PORT[:IP], pssl:PORT[:IP], punix:PATH or none',
  },
  { flag: 'api', env: 'WEFT_API', arg: 'HOST:PORT', def: '0.0.0.0:8080', help: 'REST API listener' },
  { flag: 'store', env: 'WEFT_STORE', arg: 'URL', def: 'file:./weft-data', help: 'file:DIR or redis://...' },
  {
    flag: 'restore',
    env: 'WEFT_RESTORE',
    arg: 'FILE',
    help: "an empty store starts with the intent in FILE (weft export's, or any file weft apply takes), committed as one batch before any switch is served; a store that holds intent ignores it",
  },
  {
    flag: 'admin-token',
    env: 'WEFT_ADMIN_TOKEN',
    arg: 'SECRET',
    multiple: true,
    help: 'bearer token with admin rights on the REST API (repeatable; env: comma-separated)',
  },
  {
    flag: 'datapath-type',
    env: 'WEFT_DATAPATH_TYPE',
    arg: 'TYPE',
    def: 'system',
    help: 'datapath type of integration bridges of chassis not described in the intent: system|netdev',
  },
  {
    flag: 'tunnel-tos',
    env: 'WEFT_TUNNEL_TOS',
    arg: 'TOS',
    def: '0',
    help: "inherit: the VXLAN ports weft makes copy each packet's DSCP to the tunnel header, so the underlay sees qos.dscp marks (and a VM's own where its endpoint has none); 0: the underlay sees none",
  },
  {
    flag: 'resync-interval',
    env: 'WEFT_RESYNC_INTERVAL',
    arg: 'SECONDS',
    def: '60',
    help: 'dump, diff and repair every switch this often (0 = never)',
  },
  {
    flag: 'neighbor-refresh',
    env: 'WEFT_NEIGHBOR_REFRESH',
    arg: 'SECONDS',
    def: '30',
    help: 'routers re-validate each neighbour learned by ARP (hosts behind VLAN bindings) this often; 3 missed answers forget it',
  },
  {
    flag: 'ra-interval',
    env: 'WEFT_RA_INTERVAL',
    arg: 'SECONDS',
    def: '200',
    help: 'routers advertise themselves to the IPv6 hosts of their networks this often (+-20%; router lifetime 1800 s, or 3 intervals if longer)',
  },
  {
    flag: 'tenant-rate-limit',
    env: 'WEFT_TENANT_RATE_LIMIT',
    arg: 'COUNTERS/FLUSHES',
    def: '120/12',
    help: "a tenant (all its tokens together) may read counters (of each kind), and flush a router's neighbours or an endpoint's connections (each), this many times a minute (0 = no limit)",
  },
  {
    flag: 'ha',
    env: 'WEFT_HA',
    arg: 'off|redis',
    def: 'off',
    help: 'HA pair: leader elected through a lease in the redis:// store (needs --store redis://...)',
  },
  {
    flag: 'ha-mode',
    env: 'WEFT_HA_MODE',
    arg: 'roles|vip',
    def: 'roles',
    help: 'roles: every bridge dials both instances, leader MASTER, standby SLAVE; vip: bridges dial the VIP only',
  },
  {
    flag: 'instance-id',
    env: 'WEFT_INSTANCE_ID',
    arg: 'ID',
    help: 'this instance in the HA pair: letters, digits, . _ - (default: the host name)',
  },
  {
    flag: 'lease-ttl',
    env: 'WEFT_LEASE_TTL',
    arg: 'MS',
    def: '2000',
    help: 'leader lease lifetime in ms (300-60000); renewed every third of it',
  },
  {
    flag: 'advertise-openflow',
    env: 'WEFT_ADVERTISE_OPENFLOW',
    arg: 'TARGET',
    help: 'OpenFlow target hypervisors reach this instance at, e.g. tcp:192.0.2.1:6653 (HA roles mode)',
  },
  {
    flag: 'advertise-ovsdb',
    env: 'WEFT_ADVERTISE_OVSDB',
    arg: 'TARGET',
    help: 'OVSDB manager target hypervisors reach this instance at, e.g. tcp:192.0.2.1:6640 (HA)',
  },
  { flag: 'log-level', env: 'WEFT_LOG_LEVEL', arg: 'LEVEL', def: 'info', help: logLevels.join('|') },
  {
    flag: 'echo-interval',
    env: 'WEFT_ECHO_INTERVAL',
    arg: 'SECONDS',
    def: String(defaultSessionOptions.echoIntervalMs / 1000),
    help: 'probe an idle switch with ECHO_REQUEST after this long',
  },
  {
    flag: 'echo-misses',
    env: 'WEFT_ECHO_MISSES',
    arg: 'N',
    def: String(defaultSessionOptions.echoMisses),
    help: 'disconnect after N unanswered echo intervals',
  },
  {
    flag: 'hello-timeout',
    env: 'WEFT_HELLO_TIMEOUT',
    arg: 'SECONDS',
    def: String(defaultSessionOptions.helloTimeoutMs / 1000),
    help: 'drop a peer that has not completed the handshake by then',
  },
  {
    flag: 'request-timeout',
    env: 'WEFT_REQUEST_TIMEOUT',
    arg: 'SECONDS',
    def: String(defaultSessionOptions.requestTimeoutMs / 1000),
    help: 'deadline of one request to a switch',
  },
  {
    flag: 'max-message-bytes',
    env: 'WEFT_MAX_MESSAGE_BYTES',
    arg: 'N',
    def: String(defaultSessionOptions.maxMessageBytes),
    help: 'close a switch that announces a longer message',
  },
  {
    flag: 'write-queue-bytes',
    env: 'WEFT_WRITE_QUEUE_BYTES',
    arg: 'N',
    def: String(defaultSessionOptions.writeQueueBytes),
    help: 'bytes queued towards one switch before writers wait',
  },
  {
    flag: 'packet-in-rate',
    env: 'WEFT_PACKET_IN_RATE',
    arg: 'PER_SECOND',
    def: String(defaultSessionOptions.packetInRate),
    help: 'PACKET_IN accepted per switch per second; the excess is shed',
  },
  {
    flag: 'packet-in-burst',
    env: 'WEFT_PACKET_IN_BURST',
    arg: 'N',
    def: String(defaultSessionOptions.packetInBurst),
    help: 'PACKET_IN burst allowed above the rate',
  },
];
