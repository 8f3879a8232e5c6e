// `acia/testing`: the test doubles ACIA's own tests, `acia demo` and the benchmarks drive the real code with,
// kept out of the package root: a local fake of the Anthropic and OpenAI wire APIs that serves a script and
// checks every request against ACIA's request invariants, and the in-process scripted model.
export { brokenToolJson, callerMatches, type Fault, FAULTS, loadScript, parseScript, Script, ScriptEngine, ScriptTurn, type ServedTurn, splitPieces } from './core/llm/script.js';
export { ScriptedClient, type ScriptedClientOptions } from './core/llm/scripted-client.js';
export { type FakeServer, type FakeServerOptions, type RecordedRequest, startFakeAnthropicServer } from './core/llm/fake-server.js';
export { anthropicRequestProblems, openAiRequestProblems } from './core/llm/request-invariants.js';
