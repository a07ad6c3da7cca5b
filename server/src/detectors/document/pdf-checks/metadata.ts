/**
 * Metadata: the document information dictionary (§14.3.3) against XMP (§14.3.2), impossible
 * dates, and the producers that edit existing PDFs rather than author them.
 */
import { decodeTextString, type PdfDict } from '../pdf-syntax.js';
import { type Context, quote } from './context.js';

/** Producers/creators that edit existing PDFs rather than author them. */
const EDITING_TOOLS = [
  /ilovepdf/i,
  /smallpdf/i,
  /sejda/i,
  /pdfescape/i,
  /pdf-?xchange\s*editor/i,
  /foxit\s*(phantom|editor|pdf editor)/i,
  /nitro\s*pro/i,
  /pdffiller/i,
  /docfly/i,
  /formswift/i,
  /pdf\s*candy/i,
  /soda\s*pdf/i,
  /pdfelement|wondershare/i,
  /master\s*pdf\s*editor/i,
  /pdf\s*expert/i,
  /inkscape/i,
  /libreoffice\s*draw/i,
  /abbyy\s*finereader\s*pdf\s*editor/i,
  /canva/i,
  /photoshop/i,
  /gimp/i,
  /pdf24/i,
  /qoppa/i,
  /adobe\s*acrobat.*(edit|pro)/i,
];
/** Online services where the original author had no control over the edit. */
const ONLINE_EDITORS = /ilovepdf|smallpdf|sejda|pdfescape|pdffiller|docfly|formswift|pdf\s*candy|pdf24|canva/i;

/** PDF date string (§7.9.4), e.g. D:20240131120000+01'00'. */
function parsePdfDate(text: string | undefined): Date | undefined {
  if (!text) return undefined;
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?/.exec(text.trim());
  if (!match) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = match;
  const offset = sign === '+' || sign === '-' ? `${sign}${oh}:${om}` : 'Z';
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function parseIsoDate(text: string | undefined): Date | undefined {
  if (!text) return undefined;
  const date = new Date(text.trim());
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function xmpField(xmp: string, name: string): string | undefined {
  const escaped = name.replace(':', '\\:');
  const element = new RegExp(`<${escaped}[^>]*>([\\s\\S]*?)</${escaped}>`).exec(xmp);
  if (element) {
    const inner = element[1]!
      .replace(/<rdf:li[^>]*>([\s\S]*?)<\/rdf:li>/, '$1')
      .replace(/<[^>]+>/g, '')
      .trim();
    return decodeXmlEntities(inner);
  }
  const attribute = new RegExp(`${escaped}\\s*=\\s*"([^"]*)"`).exec(xmp);
  return attribute ? decodeXmlEntities(attribute[1]!) : undefined;
}

const decodeXmlEntities = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

export function checkMetadata({ file, findings }: Context, root: PdfDict): Record<string, string | undefined> {
  const info = file.dictOf(file.trailer?.entries.get('Info'));
  const field = (name: string) => decodeTextString(file.resolve(info?.entries.get(name)));
  const metadata: Record<string, string | undefined> = {
    title: field('Title'),
    author: field('Author'),
    creator: field('Creator'),
    producer: field('Producer'),
    creationDate: field('CreationDate'),
    modDate: field('ModDate'),
  };
  const xmpRecord = file.recordOf(root.entries.get('Metadata'));
  let xmp = '';
  if (xmpRecord?.stream) {
    const decoded = file.streamData(xmpRecord);
    if (!decoded.undecodable) xmp = Buffer.from(decoded.data.subarray(0, 4 * 1024 * 1024)).toString('utf8');
  }
  if (xmp) {
    metadata.xmpCreatorTool = xmpField(xmp, 'xmp:CreatorTool');
    metadata.xmpProducer = xmpField(xmp, 'pdf:Producer');
    metadata.xmpCreateDate = xmpField(xmp, 'xmp:CreateDate');
    metadata.xmpModifyDate = xmpField(xmp, 'xmp:ModifyDate');
    const agents = [...xmp.matchAll(/stEvt:softwareAgent(?:="([^"]*)"|>([^<]*)<)/g)].map((m) => m[1] ?? m[2] ?? '').filter(Boolean);
    if (agents.length) metadata.xmpHistoryAgents = [...new Set(agents)].join('; ');
  }

  const hasInfo = Object.values(metadata).some((value) => value !== undefined && value !== '');
  if (!hasInfo) {
    findings.push({
      type: 'metadata-missing',
      severity: 'low',
      page: null,
      evidence: 'The document has neither an Info dictionary nor XMP metadata: producer and dates were never written or were stripped.',
    });
    return metadata;
  }

  const created = parsePdfDate(metadata.creationDate) ?? parseIsoDate(metadata.xmpCreateDate);
  const modified = parsePdfDate(metadata.modDate) ?? parseIsoDate(metadata.xmpModifyDate);
  if (created && modified && modified.getTime() < created.getTime() - 60_000) {
    findings.push({
      type: 'metadata-dates-impossible',
      severity: 'medium',
      page: null,
      evidence: `Modified (${modified.toISOString()}) before it was created (${created.toISOString()}).`,
    });
  } else if (created && modified && modified.getTime() - created.getTime() > 24 * 3600_000) {
    findings.push({
      type: 'metadata-modified-later',
      severity: 'info',
      page: null,
      evidence: `Last modified ${modified.toISOString()}, ${Math.round((modified.getTime() - created.getTime()) / 86_400_000)} days after creation (${created.toISOString()}).`,
    });
  }
  if (xmp && info) {
    const mismatches: string[] = [];
    const compareText = (a: string | undefined, b: string | undefined, label: string) => {
      if (a && b && a.trim() !== b.trim()) mismatches.push(`${label}: Info ${quote(a, 60)} vs XMP ${quote(b, 60)}`);
    };
    compareText(metadata.producer, metadata.xmpProducer, 'Producer');
    compareText(metadata.creator, metadata.xmpCreatorTool, 'Creator');
    const compareDate = (a: Date | undefined, b: Date | undefined, label: string) => {
      if (a && b && Math.abs(a.getTime() - b.getTime()) > 120_000)
        mismatches.push(`${label}: Info ${a.toISOString()} vs XMP ${b.toISOString()}`);
    };
    compareDate(parsePdfDate(metadata.creationDate), parseIsoDate(metadata.xmpCreateDate), 'CreationDate');
    compareDate(parsePdfDate(metadata.modDate), parseIsoDate(metadata.xmpModifyDate), 'ModDate');
    if (mismatches.length) {
      findings.push({
        type: 'metadata-mismatch',
        severity: 'medium',
        page: null,
        evidence: `Info dictionary and XMP metadata disagree (one was updated by a tool that left the other): ${mismatches.join('; ')}.`,
      });
    }
  }
  const tools = [metadata.producer, metadata.creator, metadata.xmpProducer, metadata.xmpCreatorTool, metadata.xmpHistoryAgents].filter(
    (t): t is string => Boolean(t),
  );
  const editors = [...new Set(tools.filter((tool) => EDITING_TOOLS.some((pattern) => pattern.test(tool))))];
  if (editors.length) {
    const online = editors.some((tool) => ONLINE_EDITORS.test(tool));
    // A PDF editor in the producer chain proves only that one was used, not what for, so
    // this never decides a verdict alone; an online editor weighs more.
    findings.push({
      type: 'editing-tool',
      severity: online ? 'low' : 'info',
      page: null,
      evidence: `Produced or last saved with a PDF editing tool: ${editors.map((e) => quote(e, 60)).join(', ')}.`,
    });
  }
  const creatorFamily = metadata.creator?.split(/[\s/(]/)[0]?.toLowerCase();
  const producerFamily = metadata.producer?.split(/[\s/(]/)[0]?.toLowerCase();
  if (
    metadata.creator &&
    metadata.producer &&
    creatorFamily &&
    producerFamily &&
    creatorFamily !== producerFamily &&
    editors.some((e) => e === metadata.producer)
  ) {
    findings.push({
      type: 'producer-differs',
      severity: 'low',
      page: null,
      evidence: `Authored with ${quote(metadata.creator, 60)} but last written by ${quote(metadata.producer, 60)}.`,
    });
  }
  return metadata;
}
