// A deliberately sloppy backend, run by `station-sim run` as its command (test/judge/judge-outlets.test.ts):
// it publishes unlock commands over MQTT the way a careless service would, and breaks exactly
//   service.qos0-command      a command at QoS 0 (CI-1, lock 1)
//   service.unknown-lock      a command for lock 9, which CI-2 does not have
//   service.retained-command  a command published retained (CI-FLEET-01, lock 1), which the broker
//                             hands the station again when it subscribes again
// and exits 0, as a test suite that checks nothing of the backend would.
// With `clean` as its argument it sends one command as the contract says and breaks nothing.
// With `retained` it publishes one command retained (CI-FLEET-02, lock 1) and exits at once, leaving it in
// the broker: the station got it live, without the flag; only the judge's read at stop sees it.
import mqtt from 'mqtt';

const mqttUrl = process.env.STATION_SIM_MQTT_URL;
const controlUrl = process.env.STATION_SIM_CONTROL_URL;
if (!mqttUrl || !controlUrl) throw new Error('run me with station-sim run');
const clean = process.argv[2] === 'clean';
const retainedOnly = process.argv[2] === 'retained';

const client = await mqtt.connectAsync(mqttUrl, { clientId: `sloppy-backend-${process.pid}`, reconnectPeriod: 0 });
const acks = new Map();
const waiting = new Map();
client.on('message', (_topic, payload) => {
  const ack = JSON.parse(payload.toString());
  acks.set(ack.commandId, ack);
  waiting.get(ack.commandId)?.();
});
await client.subscribeAsync('stations/+/acks', { qos: 1 });

const command = (commandId) => JSON.stringify({ commandId, sentAt: new Date().toISOString() });
/** Publishes a command and waits (at most 10 s) for the station's ack, which it sends once it judged it. */
async function send(token, lockId, commandId, options) {
  const acked = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ack for ${commandId}`)), 10_000);
    waiting.set(commandId, () => (clearTimeout(timer), resolve()));
    if (acks.has(commandId)) waiting.get(commandId)();
  });
  await client.publishAsync(`stations/${token}/locks/${lockId}/unlock`, command(commandId), options);
  await acked;
}

async function control(path, body) {
  const response = await fetch(`${controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status}`);
}

if (clean) {
  await send('CI-1', '1', 'clean-1', { qos: 1 });
} else if (retainedOnly) {
  await send('CI-FLEET-02', '1', 'sloppy-retained-live', { qos: 1, retain: true });
} else {
  await send('CI-1', '1', 'sloppy-qos0', { qos: 0 });
  await send('CI-2', '9', 'sloppy-lock', { qos: 1 });
  await send('CI-FLEET-01', '1', 'sloppy-retained', { qos: 1, retain: true });
  // The station subscribes again when it comes back: the broker hands it the retained command.
  await control('/stations/CI-FLEET-01/connection', { online: false });
  await control('/stations/CI-FLEET-01/connection', { online: true });
  // Until the judge has it: the retained delivery has no ack to wait for.
  for (let tries = 0; ; tries += 1) {
    const judge = await (await fetch(`${controlUrl}/judge`)).json();
    if (judge.summary['service.retained-command']) break;
    if (tries > 500) throw new Error('the retained command never reached the station');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await client.publishAsync('stations/CI-FLEET-01/locks/1/unlock', '', { qos: 1, retain: true }); // cleared again
}
await client.endAsync();
