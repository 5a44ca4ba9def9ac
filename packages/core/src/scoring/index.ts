export {
  MAX_ADJUSTMENT,
  MAX_SCORE,
  MIN_SCORE,
  SCORE_FIELDS,
  baseScore,
  clampAdjustment,
  finalScore,
} from './score.ts';
export type { ScoreField, ScoreInputs } from './score.ts';
export { ScoreAdjusterError, noAdjustment, openAiCompatibleAdjuster } from './adjuster.ts';
export type {
  AdjustInput,
  AdjusterContact,
  OpenAiCompatibleAdjusterOptions,
  ScoreAdjuster,
  ScoreAdjusterErrorKind,
} from './adjuster.ts';
