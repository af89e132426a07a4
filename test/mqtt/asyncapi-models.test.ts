/**
 * Models generated from the AsyncAPI document of the station contract by the AsyncAPI initiative's
 * own generator, Modelina (issue 19, "How it will be checked": the documents through their
 * ecosystems' tools). Served by a live simulator (`GET /sim/v1/asyncapi.json`), the document gives
 * one TypeScript model per payload, named as the contract names them, with the contract's fields,
 * required ones required; and the generated code type-checks.
 */
import { TypeScriptGenerator } from '@asyncapi/modelina';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';

let sim: StartedSimulator<true>;
let models: Map<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci', httpPort: 0, mqttPort: 0 });
  const response = await fetch(`${sim.controlUrl}/asyncapi.json`);
  expect(response.status).toBe(200);
  const generated = await new TypeScriptGenerator({ modelType: 'interface' }).generate(await response.json());
  models = new Map(generated.map((model) => [model.modelName, model.result]));
});
afterAll(async () => {
  await sim?.stop();
});

/** The fields of a generated interface: `name` or `name?` → its type. */
function fields(name: string): Record<string, string> {
  const source = models.get(name);
  expect(source, `a model named ${name}; got ${[...models.keys()].join(', ')}`).toBeDefined();
  return Object.fromEntries([...source!.matchAll(/^\s+(\w+\??): (.+);$/gm)].map((match) => [match[1]!, match[2]!]));
}

describe('Modelina on GET /sim/v1/asyncapi.json', () => {
  it('names one model per payload, the ack as its two kinds', () => {
    expect([...models.keys()].sort()).toEqual(['AckAccepted', 'AckPayload', 'AckRejected', 'LockStatePayload', 'StatusPayload', 'UnlockCommand']);
    expect(models.get('AckPayload')).toMatch(/type AckPayload = AckAccepted \| AckRejected;/);
  });

  it("gives each model the contract's fields, the required ones required", () => {
    // Modelina renames a property called `status` (a word it reserves) to `reservedStatus`.
    expect(fields('StatusPayload')).toMatchObject({ stationId: 'number', reservedStatus: "'online' | 'offline'", batteryVoltage: 'number', lastConnection: 'string' });
    expect(fields('LockStatePayload')).toMatchObject({ lockId: 'string', reservedStatus: "'locked' | 'unlocked' | 'jammed'", lastUpdated: 'string' });
    expect(fields('UnlockCommand')).toMatchObject({ commandId: 'string', 'sentAt?': 'string' });
    expect(fields('AckRejected')).toMatchObject({ commandId: 'string', lockId: 'string', accepted: 'boolean', reason: 'string' });
  });

  it('generates code that type-checks', () => {
    const source = [...models.values()].join('\n');
    const file = ts.createSourceFile('models.ts', source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    const host = ts.createCompilerHost({ strict: true, noEmit: true, types: [] });
    const original = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version, onError) => (name === 'models.ts' ? file : original(name, version, onError));
    const program = ts.createProgram(['models.ts'], { strict: true, noEmit: true, types: [], lib: ['lib.es2022.d.ts'] }, host);
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });
});
