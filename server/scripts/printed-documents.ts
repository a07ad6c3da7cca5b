/**
 * `node --import tsx scripts/printed-documents.ts --out <folder> [--count 24] [--seed 1] [--doctored]`
 *
 * Writes clean documents as people download them from web portals: invoices, bank statements
 * and payslips laid out in HTML (tables, right-aligned amounts, several fonts and sizes) and
 * printed to PDF by headless Chromium (`CHROMIUM`, default /usr/bin/chromium), whose PDF output
 * splits text mid-word at kerned pairs and sets amounts apart from their currency (label 0), for
 * `npm run eval -- --task document-intelligence --data <folder>`: the share called manipulated
 * is the text-layer comparison's false alarms on them. `--doctored` also writes each document
 * with its text layer doctored (label 1): the ToUnicode maps edited with qpdf (Debian's `qpdf`
 * package) so that copy-paste and parsers read every "2" the page shows as "7" (the PDF Mirage
 * attack, Markwood et al., USENIX Security 2017); documents whose maps could not be edited so
 * are left out.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { lcgRandom } from '../src/eval/document-cases.js';

const FONTS = ['DejaVu Sans', 'DejaVu Serif', 'Liberation Sans', 'Liberation Serif', 'Liberation Mono', 'Nimbus Roman', 'URW Bookman', 'URW Gothic', 'C059', 'P052', 'Noto Sans Mono'];
const PAYEES = ['Card payment TESCO STORES 2041', 'Transfer from J DOE', 'Direct debit EDF ENERGY', 'Salary ACME LTD', 'ATM withdrawal HIGH ST', 'Standing order RENT', 'Refund AMAZON EU', 'Interest paid'];

const money = (value: number) => value.toLocaleString('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

function document(kind: number, random: () => number): string {
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
  const font = pick(FONTS), size = 11 + Math.floor(random() * 5), padding = Math.floor(random() * 8);
  const style = `body { font-family: '${font}'; font-size: ${size}px; margin: 40px } td, th { padding: ${padding}px ${padding + 2}px } .n { text-align: right }`;
  let body: string;
  if (kind === 0) {
    let balance = 500 + random() * 4000;
    const rows = Array.from({ length: 12 + Math.floor(random() * 14) }, (_, day) => {
      const amount = Math.round((random() * 1400 - 450) * 100) / 100;
      balance += amount;
      return `<tr><td>2026-11-${String(day + 1).padStart(2, '0')}</td><td>${pick(PAYEES)}</td><td class="n">${money(amount)}</td><td class="n">${money(balance)}</td></tr>`;
    });
    body = `<h2>First Example Bank plc</h2><p>Statement of account 12-34-56 ${10_000_000 + Math.floor(random() * 89_999_999)}<br>Ms Jane Doe, 12 High Street, London N1 1AA</p>
<table><tr><th>Date</th><th>Description</th><th>Amount (GBP)</th><th>Balance (GBP)</th></tr>${rows.join('')}</table><p>Closing balance: GBP ${money(balance)}</p>`;
  } else if (kind === 1) {
    let total = 0;
    const rows = Array.from({ length: 2 + Math.floor(random() * 6) }, () => {
      const quantity = 1 + Math.floor(random() * 9), price = Math.round(random() * 40000) / 100;
      total += quantity * price;
      return `<tr><td>${pick(['Office chairs', 'Desk lamps', 'Consulting, hours', 'Printer toner', 'Licence renewal', 'Delivery'])}</td><td class="n">${quantity}</td><td class="n">€${money(price)}</td><td class="n">€${money(quantity * price)}</td></tr>`;
    });
    body = `<h1>ACME Supplies Ltd</h1><p>Invoice ${2026}-${String(Math.floor(random() * 9999)).padStart(4, '0')} · issued 2026-11-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}</p>
<table><tr><th>Item</th><th>Qty</th><th>Unit price</th><th>Amount</th></tr>${rows.join('')}</table><p><b>Total due: €${money(total)}</b> — payable within 30 days.</p>`;
  } else {
    const gross = 1800 + Math.round(random() * 420000) / 100, tax = Math.round(gross * 0.2 * 100) / 100, insurance = Math.round(gross * 0.08 * 100) / 100;
    body = `<h2>Payslip: November 2026</h2><p>Employee: Jane Doe · No. ${Math.floor(random() * 99999)} · Tax code 1257L</p>
<table><tr><td>Gross pay</td><td class="n">£${money(gross)}</td></tr><tr><td>Income tax</td><td class="n">−£${money(tax)}</td></tr><tr><td>National Insurance</td><td class="n">−£${money(insurance)}</td></tr>
<tr><td><b>Net pay</b></td><td class="n"><b>£${money(gross - tax - insurance)}</b></td></tr></table>`;
  }
  return `<!doctype html><html><head><meta charset="utf-8"><style>${style}</style></head><body>${body}</body></html>`;
}

/**
 * The document with the Unicode value of every glyph shown as "2" made "7" in its ToUnicode maps,
 * or null when no map names "2". qpdf's QDF form holds the maps uncompressed; fix-qdf repairs the
 * lengths and offsets afterwards.
 */
function doctoredTextLayer(pdf: string, scratch: string): Buffer | null {
  const qdf = join(scratch, 'qdf.pdf');
  execFileSync('qpdf', ['--qdf', '--object-streams=disable', pdf, qdf]);
  let changed = 0;
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const range = /^<([0-9A-F]{4})> <([0-9A-F]{4})> <([0-9A-F]{4})>$/;
  const text = readFileSync(qdf).toString('latin1').replace(/\d+ beginbfrange\n((?:<[0-9A-F]{4}> <[0-9A-F]{4}> <[0-9A-F]{4}>\n)+)endbfrange/g, (_, body: string) => {
    const lines = body.trim().split('\n').flatMap((line) => {
      const [low, high, first] = range.exec(line)!.slice(1).map((h) => parseInt(h, 16)) as [number, number, number];
      if (first > 0x32 || first + high - low < 0x32) return [line];
      changed++;
      const code = low + 0x32 - first;
      return [
        ...(code > low ? [`<${hex(low)}> <${hex(code - 1)}> <${hex(first)}>`] : []),
        `<${hex(code)}> <${hex(code)}> <0037>`,
        ...(code < high ? [`<${hex(code + 1)}> <${hex(high)}> <0033>`] : []),
      ];
    });
    return `${lines.length} beginbfrange\n${lines.join('\n')}\nendbfrange`;
  }).replace(/^<([0-9A-F]{4})> <0032>$/gm, (_, code: string) => {
    changed++;
    return `<${code}> <0037>`;
  });
  if (!changed) return null;
  writeFileSync(qdf, Buffer.from(text, 'latin1'));
  return execFileSync('fix-qdf', [qdf], { maxBuffer: 64 * 1024 * 1024 });
}

async function main() {
  const options = new Command()
    .requiredOption('--out <folder>', 'folder to write the PDFs and labels.csv into')
    .option('--count <n>', 'documents', '24')
    .option('--seed <n>', 'random seed', '1')
    .option('--doctored', 'also write each document with a doctored text layer (needs qpdf)')
    .parse()
    .opts<{ out: string; count: string; seed: string; doctored?: boolean }>();
  const out = resolve(options.out);
  const random = lcgRandom(Number(options.seed));
  const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
  await mkdir(out, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'mediaproof-printed-'));
  const labels = ['file,label'];
  try {
    for (let i = 0; i < Number(options.count); i++) {
      const kind = i % 3;
      const html = join(scratch, `${i}.html`);
      await writeFile(html, document(kind, random));
      const file = `${['statement', 'invoice', 'payslip'][kind]}-${String(i + 1).padStart(2, '0')}.pdf`;
      execFileSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', `--user-data-dir=${join(scratch, 'profile')}`, '--no-pdf-header-footer', `--print-to-pdf=${join(out, file)}`, `file://${html}`], { stdio: 'ignore', timeout: 60_000 });
      labels.push(`${file},0`);
      const doctored = options.doctored ? doctoredTextLayer(join(out, file), scratch) : null;
      if (doctored) {
        await writeFile(join(out, file.replace('.pdf', '-doctored.pdf')), doctored);
        labels.push(`${file.replace('.pdf', '-doctored.pdf')},1`);
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  await writeFile(join(out, 'labels.csv'), `${labels.join('\n')}\n`);
  console.log(`wrote ${labels.length - 1} printed documents to ${out} (${labels.filter((line) => line.endsWith(',1')).length} doctored)`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
