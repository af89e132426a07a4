/** The broker matrix (broker-matrix.ts) against the nats broker. */
import { describeBrokerMatrix } from './broker-matrix.js';

describeBrokerMatrix('nats');
