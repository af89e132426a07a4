import type { Link, LinkOwner } from './link.js';
import { BrokerLink, DirectLink } from './memory-links.js';
import { SocketLink } from './socket-link.js';
import type { LeanTarget } from './target.js';
import { WebSocketLink } from './websocket-link.js';

/**
 * A new link of `owner` to `target`: into a broker in this process (through its `attach` when it
 * has one, else as a stream it handles), or a socket for TCP and TLS, a WebSocket for `ws://` and
 * `wss://`.
 */
export function openLink(owner: LinkOwner, target: LeanTarget): Link {
  if (target.kind === 'ws') return new WebSocketLink(owner, target);
  if (target.kind !== 'memory') return new SocketLink(owner, target);
  const { broker } = target;
  if (broker.attach) return new DirectLink(owner, broker.attach.bind(broker));
  const link = new BrokerLink(owner);
  broker.handle(link);
  return link;
}
