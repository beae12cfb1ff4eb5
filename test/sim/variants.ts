export const VARIANTS = {} as const;
export type VariantName = keyof typeof VARIANTS;
