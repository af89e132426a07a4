/**
 * The simulator's own MQTT topics (docs/control-plane.md, "MQTT control topics"; docs/mqtt-security.md):
 * the control plane's channel to every fleet process and the `/v1` gateway's start-up sync marker.
 * They are not part of the station contract (topics.ts), so they live in a namespace of their own
 * that fixtures cannot rename; the embedded broker lets only the control identity touch it, save
 * the gateway's own sync topic. The messages on the control topics are the control plane's
 * (src/control/control-protocol.ts).
 */

/** The namespace of every topic below. */
export const SIM_NAMESPACE = 'station-sim';

export const SIM_TOPICS = {
  /** Control plane → the fleet process hosting `{token}`. */
  control: (token: string) => `${SIM_NAMESPACE}/control/${token}`,
  controlFilter: `${SIM_NAMESPACE}/control/+`,
  /** Control plane → every fleet process: `query` (snapshots) or `reset`. */
  fleet: `${SIM_NAMESPACE}/fleet`,
  /** Fleet process → control plane, one topic per request. */
  reply: (requestId: string) => `${SIM_NAMESPACE}/replies/${requestId}`,
  /** Simulator events the contract does not carry (a fault fired). */
  events: (token: string) => `${SIM_NAMESPACE}/events/${token}`,
  eventsFilter: `${SIM_NAMESPACE}/events/+`,
  /**
   * Control plane → every fleet process: retained `1` while somebody listens to that control
   * plane's whole event stream, cleared (empty, also its will) when nobody does. Fleets report lock
   * phases (`lock.phase` on `events`) only while one is set: nobody else reads them.
   */
  listener: (clientId: string) => `${SIM_NAMESPACE}/listeners/${clientId}`,
  listenersFilter: `${SIM_NAMESPACE}/listeners/+`,
  /**
   * A topic only one `/v1` gateway session uses (`clientId` is its client id); it carries nothing
   * but the start-up sync marker the gateway sends itself.
   */
  serviceSync: (clientId: string) => `${SIM_NAMESPACE}/service/${clientId}/sync`,
} as const;
