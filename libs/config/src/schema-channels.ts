import { z } from "zod";
import { LOWER_ID } from "./model-ref.js";

/** Fields beyond `kind` belong to the channel plugin, which validates them itself. */
export const channelSchema = () => z.looseObject({
  kind: z.string().regex(LOWER_ID, 'expected a channel kind such as "telegram"'),
});
export type ChannelConfig = z.output<ReturnType<typeof channelSchema>>;

export const channelsSectionSchema = () => z
  .object({ default: z.string().optional() })
  .catchall(channelSchema())
  .prefault({})
  .superRefine((channels, ctx) => {
    for (const id of Object.keys(channels)) {
      if (id !== "default" && !LOWER_ID.test(id)) {
        ctx.addIssue({
          code: "custom",
          path: [id],
          message: "channel ids use lowercase letters, digits, '_' and '-', starting with a letter or digit",
        });
      }
    }
    if (channels.default !== undefined && !channelIds(channels).includes(channels.default)) {
      ctx.addIssue({
        code: "custom",
        path: ["default"],
        message: `"${channels.default}" is not a configured channel`,
      });
    }
  });
export type ChannelsConfig = z.output<ReturnType<typeof channelsSectionSchema>>;

function channelIds(channels: object): string[] {
  return Object.keys(channels).filter((key) => key !== "default");
}

/** The configured channels as [id, config] pairs, without the `default` pointer. */
export function channelEntries(channels: ChannelsConfig): Array<[string, ChannelConfig]> {
  return channelIds(channels).map((id) => [id, channels[id] as ChannelConfig]);
}
