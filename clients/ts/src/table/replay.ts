// The link to a finished deal's HTML replay on the same port: `GET /replay?token=…` (service/web.py)
// takes the deal's final token in URL-safe base64; the seat token will do, so the page links to
// its replay without ever holding the host's token. The service serves it only once the deal is
// over (before, the replay would show hands that are still hidden).
import { base64Encode } from "@bufbuild/protobuf/wire";

export function replayHref(finalSeatToken: Uint8Array): string {
  const token = base64Encode(finalSeatToken, "url").replace(/=+$/, "");
  return `/replay?${new URLSearchParams({ token }).toString()}`;
}
