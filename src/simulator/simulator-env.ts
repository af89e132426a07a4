/**
 * The environment variables that name a running simulator: `station-sim run` sets them for the
 * command it runs, and the test helpers (`station-sim/testing`) attach to what they name. One
 * table, so the two cannot drift apart.
 */
export const SIMULATOR_ENV = {
  apiUrl: 'STATION_SIM_API_URL',
  mqttUrl: 'STATION_SIM_MQTT_URL',
  /** The control plane's URL, `{apiUrl}/sim/v1`. */
  controlUrl: 'STATION_SIM_CONTROL_URL',
  /** Only when the control plane requires a token (`--control-token`, or this variable already set). */
  controlToken: 'STATION_SIM_CONTROL_TOKEN',
} as const;
