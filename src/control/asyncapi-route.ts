/**
 * `GET /sim/v1/asyncapi.json` (docs/api.md, "The AsyncAPI document"): the AsyncAPI 3.0 document of
 * the station MQTT contract for the running fixture, with the broker the simulator uses as its
 * server. `station-sim contract asyncapi --fixture F --broker URL` prints the same document.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Fixture } from '../fixture/fixture-schema.js';
import { buildAsyncApi, type AsyncApiDocument } from '../mqtt/asyncapi.js';

export interface AsyncApiRouteOptions {
  fixture: Fixture;
  /** The broker the stations use, credentials redacted. @default none: the document has no `servers` */
  mqttUrl?: string;
}

const AsyncApiDocumentSchema = Type.Unsafe<AsyncApiDocument>({
  type: 'object',
  additionalProperties: true,
  description: 'An AsyncAPI 3.0.0 document of the station MQTT contract.',
});

export const asyncApiRoute: FastifyPluginAsyncTypebox<AsyncApiRouteOptions> = async (plane, { fixture, mqttUrl }) => {
  // The fixture does not change while the simulator runs: the document is built once, when first asked for.
  let document: AsyncApiDocument | undefined;
  plane.get('/asyncapi.json', { schema: { tags: ['control'], operationId: 'getAsyncApiDocument', summary: 'The AsyncAPI 3.0 document of the station MQTT contract', response: { 200: AsyncApiDocumentSchema } } }, async () => {
    document ??= buildAsyncApi(fixture, mqttUrl === undefined ? {} : { brokerUrl: mqttUrl });
    return document;
  });
};
