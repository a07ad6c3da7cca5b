/**
 * Active content: JavaScript (§12.6.4.16), Launch (§12.6.4.5), URI (§12.6.4.7) and SubmitForm
 * (§12.7.5.2) actions, embedded files (§7.11.4), XFA and rich media.
 */
import { decodeTextString, isDict, isName, isRef, isString, latin1, type PdfDict, type PdfValue } from '../pdf-syntax.js';
import type { Severity } from '../findings.js';
import { type Context, quote } from './context.js';

const EXECUTABLE_NAME = /\.(exe|scr|bat|cmd|com|pif|vbs|vbe|js|jse|wsf|wsh|ps1|msi|dll|jar|hta|lnk|sh|app|apk|docm|xlsm)$/i;

export function checkActionsAndEmbeddedFiles({ file, findings, checkAbort }: Context, root: PdfDict): void {
  const reachable = file.reachable();
  const once = new Set<string>();
  const add = (type: string, severity: Severity, evidence: string) => {
    const key = `${type}:${evidence}`;
    if (once.has(key) || findings.filter((f) => f.type === type).length >= 20) return;
    once.add(key);
    findings.push({ type, severity, page: null, evidence });
  };
  let visited = 0;
  for (const num of reachable) {
    if (++visited % 5000 === 0) checkAbort();
    const record = file.finalTable.get(num);
    if (!record) continue;
    const dict = isDict(record.value) ? record.value : record.stream?.dict;
    if (!dict) continue;
    inspectDict(dict, 0);
    if (record.stream && isName(record.stream.dict.entries.get('Type'), 'EmbeddedFile')) {
      const decoded = file.streamData(record);
      const head = latin1(decoded.data, 0, Math.min(4, decoded.data.length));
      const executable = head.startsWith('MZ') || head.startsWith('\x7fELF') || head.startsWith('#!');
      add(
        'embedded-file',
        executable ? 'high' : 'medium',
        `Embedded file stream of ${decoded.data.length} bytes${executable ? ' holding an executable program' : ''}.`,
      );
    }
  }
  function inspectDict(dict: PdfDict, depth: number): void {
    if (depth > 12) return;
    const action = dict.entries.get('S');
    if (isName(action, 'JavaScript') || dict.entries.has('JS')) {
      const js = file.resolve(dict.entries.get('JS'));
      const code = isString(js)
        ? latin1(js.bytes, 0, Math.min(js.bytes.length, 200))
        : isRef(dict.entries.get('JS'))
          ? '(script stream)'
          : '';
      add('javascript', 'high', `JavaScript action${code ? `: ${quote(code.replace(/\s+/g, ' '), 120)}` : ''}.`);
    } else if (isName(action, 'Launch')) {
      const target =
        decodeTextString(file.resolve(dict.entries.get('F'))) ??
        decodeTextString(file.resolve(file.dictOf(dict.entries.get('Win'))?.entries.get('F')));
      add('launch-action', 'high', `Launch action that starts a program${target ? ` ${quote(target)}` : ''}.`);
    } else if (isName(action, 'URI')) {
      add('uri-action', 'info', `Link to ${quote(decodeTextString(file.resolve(dict.entries.get('URI'))) ?? '?')}.`);
    } else if (isName(action, 'SubmitForm') || isName(action, 'ImportData')) {
      add(
        'form-submit-action',
        'medium',
        `${(action as { name: string }).name} action sending or loading form data${dict.entries.has('F') ? ` (${quote(decodeTextString(file.resolve(file.dictOf(dict.entries.get('F'))?.entries.get('F') ?? dict.entries.get('F'))) ?? '?')})` : ''}.`,
      );
    } else if (isName(action, 'GoToR') || isName(action, 'GoToE')) {
      add('remote-goto-action', 'low', `${(action as { name: string }).name} action opening another document.`);
    }
    if (isName(dict.entries.get('Type'), 'Filespec') && dict.entries.has('EF')) {
      const name =
        decodeTextString(file.resolve(dict.entries.get('UF'))) ?? decodeTextString(file.resolve(dict.entries.get('F'))) ?? '(unnamed)';
      add(
        'embedded-file',
        EXECUTABLE_NAME.test(name) ? 'high' : 'medium',
        `Embedded file ${quote(name)}${EXECUTABLE_NAME.test(name) ? ' with an executable file type' : ''}.`,
      );
    }
    if (dict.entries.has('RichMedia') || isName(dict.entries.get('Subtype'), 'RichMedia'))
      add('rich-media', 'low', 'Rich media (Flash/video) content.');
    if (dict.entries.has('XFA')) add('xfa-form', 'low', 'XFA form: its content can differ from what non-XFA viewers show.');
    // Direct (not indirect) sub-dictionaries are part of this object: look inside them too.
    const visit = (value: PdfValue, level: number) => {
      if (level > 8) return;
      if (isDict(value)) inspectDict(value, depth + 1);
      else if (Array.isArray(value)) for (const item of value.slice(0, 10_000)) visit(item, level + 1);
    };
    for (const value of dict.entries.values()) visit(value, 0);
  }
  const names = file.dictOf(root.entries.get('Names'));
  if (names?.entries.has('JavaScript')) add('javascript', 'high', 'Document-level JavaScript in the catalog name tree.');
}
