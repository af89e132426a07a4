/** Turns a failed first connection into one catalogue error that names the broker (without credentials). */
import { SimError } from '../../errors.js';

export function connectError(error: Error & { code?: string | number }, brokerUrl: string): SimError {
  if (error instanceof SimError) return error;
  // CONNACK return codes 4 and 5: bad user name or password, not authorised (MQTT 3.1.1, section 3.2.2.3).
  if (error.code === 4 || error.code === 5 || /not authori[sz]ed|bad user ?name or password/i.test(error.message)) {
    return new SimError('BROKER_REFUSED', `The MQTT broker at ${brokerUrl} refused the connection (${error.message})`, { cause: error });
  }
  const reason = typeof error.code === 'string' ? error.code : error.message;
  return new SimError('BROKER_UNREACHABLE', `The MQTT broker at ${brokerUrl} cannot be reached (${reason})`, { cause: error });
}
