// `acia/no-ledger-casts`: ledger data is read through the parser (src/core/ledger/entry.ts), which types
// each entry's payload by its `type`; a cast anywhere else would claim a shape nothing checked. Reports,
// outside the parser: a cast of an entry's `.data` (the object's type is a ledger entry: it has seq,
// prevHash, hash and data), a cast to an entry or payload type (LedgerEntry, StoredLedgerEntry, EntryOf,
// EventDataOf), and any double cast `as unknown as`, which hides what it converts from.
import { resolve } from 'node:path';

const PARSER = resolve(import.meta.dirname, '..', 'src', 'core', 'ledger', 'entry.ts');
const LEDGER_TYPES = /\b(LedgerEntry|StoredLedgerEntry|EntryOf|EventDataOf)\b/;

function isLedgerEntry(type) {
  if (type.isUnion()) return type.types.some(isLedgerEntry);
  return ['seq', 'prevHash', 'hash', 'data'].every((p) => type.getProperty(p) !== undefined);
}

function unwrap(node) {
  let n = node;
  while (n.type === 'ChainExpression' || n.type === 'TSNonNullExpression') n = n.expression;
  return n;
}

const noLedgerCasts = {
  meta: { type: 'problem', docs: { description: 'ledger data is typed by the parser, never cast' }, schema: [] },
  create(context) {
    if (context.filename === PARSER) return {};
    const services = context.sourceCode.parserServices;
    const checker = services?.program?.getTypeChecker();
    const check = (node) => {
      const target = context.sourceCode.getText(node.typeAnnotation);
      const inner = unwrap(node.expression);
      if ((inner.type === 'TSAsExpression' || inner.type === 'TSTypeAssertion') && inner.typeAnnotation.type === 'TSUnknownKeyword') {
        context.report({ node, message: 'a double cast (`as unknown as`) hides what it converts from: type the value at its source' });
        return;
      }
      if (LEDGER_TYPES.test(target)) {
        context.report({ node, message: `a cast to a ledger type (${target}): read entries with parseLedgerEntry and narrow them on \`type\`` });
        return;
      }
      if (checker && inner.type === 'MemberExpression' && !inner.computed && inner.property.name === 'data') {
        const object = services.esTreeNodeToTSNodeMap.get(inner.object);
        if (isLedgerEntry(checker.getNonNullableType(checker.getTypeAtLocation(object)))) {
          context.report({ node, message: 'a cast of a ledger entry\'s data: switch on `entry.type` (or use dataOf/firstOf/lastOf) and the payload is typed' });
        }
      }
    };
    return { TSAsExpression: check, TSTypeAssertion: check };
  },
};

export default { meta: { name: 'acia-ledger' }, rules: { 'no-ledger-casts': noLedgerCasts } };
