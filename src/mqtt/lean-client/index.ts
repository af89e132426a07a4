/**
 * The lean MQTT 3.1.1 client (client.ts, whose header says what it supports and refuses) and the
 * links that carry its packets: into a broker in this process (memory-links.ts), over TCP or TLS
 * (socket-link.ts) or a WebSocket (websocket-link.ts).
 */
export { LeanMqttClient, type DeliveryInfo, type LeanClientOptions, type MqttSession, type PublishProperties } from './client.js';
export type { LeanTarget, TlsSource } from './target.js';
export { MQTT_WS_PROTOCOL } from './websocket-link.js';
