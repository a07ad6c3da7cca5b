/** Font subsets (§9.6.4): one font embedded as two subsets means a second program set text. */
import { type Context, quote } from './context.js';
import type { PdfReport } from '../pdf-forensics.js';

export function checkFonts({ findings }: Context, contents: PdfReport['contents']): void {
  const subsetsByFont = new Map<string, Map<string, Set<number>>>();
  for (const [pageNumber, { content }] of contents) {
    for (const baseFont of content.fonts.values()) {
      const match = /^([A-Z]{6})\+(.+)$/.exec(baseFont);
      if (!match) continue;
      const [, prefix, name] = match;
      const subsets = subsetsByFont.get(name!) ?? new Map<string, Set<number>>();
      const pages = subsets.get(prefix!) ?? new Set<number>();
      pages.add(pageNumber);
      subsets.set(prefix!, pages);
      subsetsByFont.set(name!, subsets);
    }
  }
  for (const [name, subsets] of subsetsByFont) {
    if (subsets.size < 2) continue;
    const pageSets = [...subsets.values()];
    const shared = [...pageSets[0]!].filter((page) => pageSets.slice(1).some((set) => set.has(page)));
    findings.push({
      type: 'font-subset-mismatch',
      // Two subsets of one font on one page: text was set by two different programs.
      severity: shared.length ? 'medium' : 'low',
      page: shared[0] ?? null,
      evidence: `Font ${quote(name)} is embedded as ${subsets.size} different subsets (${[...subsets.keys()].join(', ')})${shared.length ? ` on the same page ${shared[0]}` : ' on different pages'}: text was added or edited by a second tool.`,
    });
  }
}
