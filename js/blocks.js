// How the component list sits in the page: the components in blocks of about BLOCK_SIZE, in
// order, and a block off screen is neither styled, laid out nor painted (content-visibility:
// auto, with the height it last had). With 1 500 components in one list, every change (a
// streamed token) made the browser relay out and repaint all of them (measured: 1.6x the
// page's CPU of an empty session over a stream); with content-visibility on each component
// instead, the browser checked each one against the viewport on every frame (5-30 ms a frame
// at 1 500-3 000 components, measured). A block is a plain box: it draws nothing of its own.

import { element } from "./dom.js";

/** Components per block: 30 blocks for 1 500 components. */
export const BLOCK_SIZE = 50;

// Off screen, a block never shown yet counts as BLOCK_SIZE components of about 48 px, with
// the list's 6 px gaps; after it was shown, as tall as it was.
export const BLOCKS_STYLE = `
.lineup-component-block { display: flex; flex-direction: column; gap: 6px; content-visibility: auto; contain-intrinsic-size: auto none auto ${BLOCK_SIZE * 54}px; }
`;

export class Blocks {
  /** @param {HTMLElement} container @param {number} [size] */
  constructor(container, size = BLOCK_SIZE) {
    this.container = container;
    this.size = size;
  }

  /**
   * The component right after `previous` in the page (the first one when null), or null.
   * @param {Element | null} previous @returns {Element | null}
   */
  next(previous) {
    if (!previous) return this.container.firstElementChild?.firstElementChild ?? null;
    return previous.nextElementSibling ?? previous.parentElement?.nextElementSibling?.firstElementChild ?? null;
  }

  /**
   * Put `node` right after `previous` (first when null), unless it is there already. A node
   * after the last of a full block starts the next block, or a new one; one in the middle
   * joins its neighbour's block, which then holds more than `size` (a component shown again
   * in its old place: rare).
   * @param {HTMLElement} node @param {Element | null} previous
   */
  place(node, previous) {
    if (this.next(previous) === node) return;
    this.remove(node);
    const block = previous ? previous.parentElement : null;
    if (previous && block && (previous.nextElementSibling || block.childElementCount < this.size)) {
      previous.after(node);
      return;
    }
    const following = block ? block.nextElementSibling : this.container.firstElementChild;
    if (following && following.childElementCount < this.size) {
      following.prepend(node);
    } else {
      const made = element("div", "lineup-component-block");
      made.append(node);
      if (block) block.after(made);
      else this.container.prepend(made);
    }
  }

  /** Take `node` out of the page, and its block with it when that is left empty. @param {Element} node */
  remove(node) {
    const block = node.parentElement;
    node.remove();
    if (block && block.parentElement === this.container && block.childElementCount === 0) block.remove();
  }

  /** Everything out. */
  clear() {
    this.container.replaceChildren();
  }
}
