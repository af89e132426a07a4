/**
 * The control plane's moving parts, started together: the MQTT channel to the fleet, the event
 * hub fed by it, and the scenario timeline. `register(app)` adds the `/sim/v1` routes to an HTTP
 * server; `stop()` ends them all.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import type { MqttTransport } from '../mqtt/transport.js';
import type { SharedIdentity } from '../mqtt/identity.js';
import type { BrokerTap } from '../mqtt/broker-link.js';
import type { Clock } from '../shared/clock.js';
import type { ApiInstance } from '../service/build-api.js';
import { ControlChannel } from './control-channel.js';
import { EventHub } from './event-hub.js';
import { registerControlPlane, type AdvanceableClock } from './control-plane.js';
import type { ControlRoutesOptions } from './control-routes.js';
import { startScenario, type StartedScenario } from './scenario-runner.js';
import { RequestJournal } from './request-journal.js';
import { JudgeLog } from '../judge/judge-log.js';

export interface ControlOptions {
  transport: MqttTransport;
  /** Who the control plane is on the broker. @default a client id of its own, no credentials */
  identity?: SharedIdentity;
  fixture: Fixture;
  /** The run's seed, for API faults with a probability. @default fixture.seed */
  seed?: number;
  clock: Clock & Partial<AdvanceableClock>;
  /** The broker's URL, credentials redacted, for `/sim/v1/asyncapi.json`. @default none */
  mqttUrl?: string;
  /** Required bearer token of `/sim/v1`. @default none: open (bind to loopback) */
  controlToken?: string;
  /** Called when a scenario step fails. */
  onScenarioError?: (message: string) => void;
  /** Watch the contract topics inside the embedded broker instead of over MQTT. */
  tap?: BrokerTap;
  /** The embedded broker's refusals: counted in health, sent on the event stream. */
  brokerRefusals?: BrokerRefusals;
}

/** What the control plane needs of the embedded broker's refusals (`StartedBroker`). */
export interface BrokerRefusals {
  refusedCounts(): Record<'connect' | 'publish' | 'subscribe' | 'packet-too-large', number>;
  onRefused(
    listener: (
      refusal: { kind: 'connect' | 'publish' | 'subscribe' | 'packet-too-large'; identity?: string; clientId?: string; topic?: string; reason: string },
      counts: Record<'connect' | 'publish' | 'subscribe' | 'packet-too-large', number>,
    ) => void,
  ): () => void;
}

export interface StartedControl {
  readonly channel: ControlChannel;
  readonly hub: EventHub;
  /** Every `/v1` request and unlock command since start (bounded), for `/sim/v1/journal`. */
  readonly journal: RequestJournal;
  /** What the judge found, from every fleet process on the broker, for `/sim/v1/judge`. */
  readonly judge: JudgeLog;
  /** Adds the `/sim/v1` routes; `gatewayRefused` reports the in-process `/v1` gateway's refusals in health. */
  register(app: ApiInstance, extras?: Pick<ControlRoutesOptions, 'gatewayRefused' | 'gatewayBrokerRefused'>): Promise<void>;
  /** The stations of this process, whose refusals by the broker health counts (`stations.refused`). */
  watchStations(stations: Iterable<{ readonly refusal: string | undefined }>): void;
  /** Starts the fixture's scenario timeline (call once the fleet is up). */
  startScenario(): void;
  /** Stops the scenario timeline: first thing on shutdown, so no step acts on a fleet that is stopping. */
  stopScenario(): void;
  /** Resolves once every scenario step due so far has been answered (at once without a scenario). */
  scenarioSettled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Each refusal by the broker as a `broker.refused` event; returns what stops it. Already
 * rate-limited by the broker (at most 20 a second), so a flood of refusals cannot flood the stream.
 */
function forwardRefusals(refusals: BrokerRefusals, hub: EventHub): () => void {
  return refusals.onRefused((refusal, counts) =>
    hub.emit({
      type: 'broker.refused',
      kind: refusal.kind,
      ...(refusal.identity === undefined ? {} : { identity: refusal.identity }),
      ...(refusal.clientId === undefined ? {} : { clientId: refusal.clientId }),
      ...(refusal.topic === undefined ? {} : { topic: refusal.topic }),
      reason: refusal.reason,
      counts,
    }),
  );
}

export async function startControl(options: ControlOptions): Promise<StartedControl> {
  const hub = new EventHub({ fixture: options.fixture, clock: options.clock });
  // Listening from the start, before the fleet and the API: every command and request is journalled.
  const journal = new RequestJournal({ commandTimeoutMs: options.fixture.api.commandTimeoutMs, now: () => options.clock.now() });
  const detachJournal = journal.attach(hub);
  const judge = new JudgeLog();
  const detachJudge = hub.subscribe((event) => {
    if (event.type !== 'judge.finding') return;
    const { type: _type, ...finding } = event;
    judge.add(finding);
  }, ['judge.finding']);
  const channel = await ControlChannel.start({
    transport: options.transport,
    ...(options.identity ? { identity: options.identity } : {}),
    fixture: options.fixture,
    onMessage: (topic, payload) => hub.handleMessage(topic, payload),
    ...(options.tap ? { tap: options.tap } : {}),
  });
  // Lock phases travel only while somebody listens to the whole stream (control-protocol.ts).
  const unlistenListening = hub.onListeningChange((listening) => channel.announceListening(listening));
  if (hub.listening) channel.announceListening(true);
  // Statuses heard over a session that was lost may be stale by the time it is back (a broker
  // restarted without persistence retains none of them): health starts again from what the
  // broker retains after the reconnect. Through the broker's tap, nothing passes the session
  // and the tap replays nothing, so there is nothing to forget and nothing would come back.
  if (!options.tap) channel.onConnectionChange(() => hub.readiness.forgetStatuses());
  const refusals = options.brokerRefusals;
  const unlistenRefusals = refusals ? forwardRefusals(refusals, hub) : undefined;
  let scenario: StartedScenario | undefined;
  let ownStations: readonly { readonly refusal: string | undefined }[] = [];
  // Counted when health is asked, not as refusals happen: nothing is paid while nobody asks.
  const stationsRefused = (): number => ownStations.reduce((count, station) => count + (station.refusal === undefined ? 0 : 1), 0);
  return {
    channel,
    hub,
    journal,
    judge,
    register: (app, extras) =>
      registerControlPlane(app, {
        ...extras,
        channel,
        hub,
        journal,
        judge,
        seed: options.seed ?? options.fixture.seed,
        fixture: options.fixture,
        ...(options.controlToken === undefined ? {} : { controlToken: options.controlToken }),
        ...(options.mqttUrl === undefined ? {} : { mqttUrl: options.mqttUrl }),
        ...(isAdvanceable(options.clock) ? { clock: options.clock } : {}),
        // Health says not ready while the control plane cannot reach the broker (and so the fleet).
        brokerUp: () => channel.connected,
        ...(refusals ? { brokerRefused: () => refusals.refusedCounts() } : {}),
        stationsRefused,
      }),
    watchStations: (stations) => {
      ownStations = [...stations];
    },
    startScenario: () => {
      if (scenario || options.fixture.scenario.length === 0) return;
      scenario = startScenario({
        steps: options.fixture.scenario,
        channel,
        hub,
        readiness: hub.readiness,
        clock: options.clock,
        onError: (step, error) => options.onScenarioError?.(`scenario step "${step.do}" failed: ${error.message}`),
      });
    },
    stopScenario: () => scenario?.stop(),
    scenarioSettled: async () => scenario?.settled(),
    stop: async () => {
      unlistenRefusals?.();
      unlistenListening();
      detachJournal();
      detachJudge();
      scenario?.stop();
      hub.stop();
      await channel.stop();
    },
  };
}

function isAdvanceable(clock: Clock & Partial<AdvanceableClock>): clock is Clock & AdvanceableClock {
  return typeof clock.advance === 'function' && typeof clock.manual === 'boolean';
}
