/** The broker matrix (broker-matrix.ts) against the rabbitmq broker. */
import { describeBrokerMatrix } from './broker-matrix.js';

describeBrokerMatrix('rabbitmq');
