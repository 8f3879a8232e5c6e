// What every request ACIA sends to a model must satisfy, checked by the fake server on each request so
// that every test and benchmark that drives a real SDK against it checks them too. The real APIs reject
// some of these (unpaired tool calls, more than four cache breakpoints); the others are ACIA's own
// rules (a system prompt with an unfilled `{{placeholder}}` is a bug the API would happily accept).

const PLACEHOLDER = /\{\{\s*[a-zA-Z0-9_]+\s*\}\}/;
/** Anthropic allows at most four cache_control breakpoints per request. */
const MAX_BREAKPOINTS = 4;

type Json = Record<string, unknown>;

/** The problems with an Anthropic Messages request body; empty when it is fine. */
export function anthropicRequestProblems(body: Json): string[] {
  const problems: string[] = [];
  const tools = arrayOf(body['tools']);
  const system = body['system'];
  const messages = arrayOf(body['messages']);
  problems.push(...uniqueToolNames(tools.map((t) => (isRecord(t) ? t['name'] : undefined))));

  const systemText = typeof system === 'string' ? system : arrayOf(system).map((b) => (isRecord(b) && typeof b['text'] === 'string' ? b['text'] : '')).join('\n');
  const hole = PLACEHOLDER.exec(systemText);
  if (hole) problems.push(`system prompt has an unfilled placeholder ${hole[0]}`);

  // Breakpoints: only where ACIA means to put them (the last tool, the system block, the last block
  // of a message), never more than the API allows.
  let breakpoints = 0;
  tools.forEach((t, i) => {
    if (!hasCacheControl(t)) return;
    breakpoints++;
    if (i !== tools.length - 1) problems.push(`cache breakpoint on tool ${i} of ${tools.length}, not on the last`);
  });
  for (const b of arrayOf(system)) if (hasCacheControl(b)) breakpoints++;
  messages.forEach((m, i) => {
    const content = isRecord(m) ? arrayOf(m['content']) : [];
    content.forEach((b, j) => {
      if (!hasCacheControl(b)) return;
      breakpoints++;
      if (j !== content.length - 1) problems.push(`cache breakpoint inside message ${i} (block ${j} of ${content.length})`);
    });
  });
  if (breakpoints > MAX_BREAKPOINTS) problems.push(`${breakpoints} cache breakpoints; the API allows ${MAX_BREAKPOINTS}`);

  // Every tool_use is answered by a tool_result in the very next (user) message, and every tool_result
  // answers a tool_use of the message just before it.
  const seenIds = new Set<string>();
  messages.forEach((m, i) => {
    if (!isRecord(m)) {
      problems.push(`message ${i} is not an object`);
      return;
    }
    const blocks = arrayOf(m['content']);
    const uses = blocks.filter((b) => isRecord(b) && b['type'] === 'tool_use').map((b) => String((b as Json)['id']));
    for (const id of uses) {
      if (seenIds.has(id)) problems.push(`tool_use id ${id} appears twice`);
      seenIds.add(id);
    }
    if (uses.length > 0) {
      const next = messages[i + 1];
      const answered = new Set(resultIds(next));
      if (next === undefined) problems.push(`message ${i} ends the conversation with unanswered tool_use ${uses.join(', ')}`);
      else for (const id of uses) if (!answered.has(id)) problems.push(`tool_use ${id} in message ${i} has no tool_result in message ${i + 1}`);
    }
    const results = resultIds(m);
    if (results.length > 0) {
      const prev = messages[i - 1];
      const called = new Set(isRecord(prev) && prev['role'] === 'assistant' ? arrayOf(prev['content']).flatMap((b) => (isRecord(b) && b['type'] === 'tool_use' ? [String(b['id'])] : [])) : []);
      for (const id of results) if (!called.has(id)) problems.push(`tool_result ${id} in message ${i} answers no tool_use of message ${i - 1}`);
    }
  });
  return problems;
}

/** The problems with an OpenAI chat-completions request body; empty when it is fine. */
export function openAiRequestProblems(body: Json): string[] {
  const problems: string[] = [];
  const tools = arrayOf(body['tools']);
  problems.push(...uniqueToolNames(tools.map((t) => (isRecord(t) && isRecord(t['function']) ? t['function']['name'] : undefined))));
  const messages = arrayOf(body['messages']).filter(isRecord);
  for (const m of messages) {
    if (m['role'] !== 'system' || typeof m['content'] !== 'string') continue;
    const hole = PLACEHOLDER.exec(m['content']);
    if (hole) problems.push(`system prompt has an unfilled placeholder ${hole[0]}`);
  }
  // An assistant message with tool_calls is followed by one `tool` message per call, before anything else.
  messages.forEach((m, i) => {
    if (m['role'] === 'tool') {
      const id = String(m['tool_call_id']);
      let j = i - 1;
      while (j >= 0 && messages[j]?.['role'] === 'tool') j--;
      const calls = callIds(messages[j]);
      if (!calls.includes(id)) problems.push(`tool message ${i} answers ${id}, which the assistant message before it did not call`);
      return;
    }
    const calls = callIds(m);
    if (calls.length === 0) return;
    const answered: string[] = [];
    for (let j = i + 1; j < messages.length && messages[j]?.['role'] === 'tool'; j++) answered.push(String(messages[j]?.['tool_call_id']));
    for (const id of calls) if (!answered.includes(id)) problems.push(`tool call ${id} in message ${i} has no tool message after it`);
  });
  return problems;
}

function uniqueToolNames(names: unknown[]): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const n of names) {
    if (typeof n !== 'string' || n === '') problems.push('a tool has no name');
    else if (seen.has(n)) problems.push(`tool ${n} is defined twice`);
    else seen.add(n);
  }
  return problems;
}

function resultIds(m: unknown): string[] {
  if (!isRecord(m) || m['role'] !== 'user') return [];
  return arrayOf(m['content']).flatMap((b) => (isRecord(b) && b['type'] === 'tool_result' ? [String(b['tool_use_id'])] : []));
}

function callIds(m: unknown): string[] {
  if (!isRecord(m) || m['role'] !== 'assistant') return [];
  return arrayOf(m['tool_calls']).flatMap((c) => (isRecord(c) ? [String(c['id'])] : []));
}

function hasCacheControl(v: unknown): boolean {
  return isRecord(v) && v['cache_control'] !== undefined && v['cache_control'] !== null;
}

function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? (v as unknown[]) : [];
}

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
