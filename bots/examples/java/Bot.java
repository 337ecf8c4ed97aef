// A Tablanette bot in plain Java (no library) for the JSON-lines protocol (docs/jsonlines.md).
//
// Each line on standard input is one JSON object; on a "turn" it answers one line,
// {"play": INDEX}, the index of a play in that turn's "legal_plays". It plays the
// capture that takes the most cards, or else the first legal play (a trail).
// Hosted from source: `tablanette bot submit bots/examples/java --name javabot`
// (bot.toml builds it with javac in the sandbox and runs it with java).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public final class Bot {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String type = stringField(line, "type");
            if ("turn".equals(type)) {
                System.out.println("{\"play\": " + choose(legalPlays(line)) + "}");
                System.out.flush();
            } else if ("end".equals(type)) {
                return;
            }
        }
    }

    /** The play capturing the most cards ("9C:AH,8H" captures two), the first on a tie; 0 for none. */
    static int choose(List<String> plays) {
        int best = 0, most = -1;
        for (int i = 0; i < plays.size(); i++) {
            String p = plays.get(i);
            int colon = p.indexOf(':');
            int taken = colon < 0 ? 0 : p.substring(colon + 1).split(",").length;
            if (taken > most) {
                best = i;
                most = taken;
            }
        }
        return best;
    }

    /** The string value of a top-level field, e.g. "type" (enough for this protocol's plain values). */
    static String stringField(String json, String name) {
        int at = json.indexOf("\"" + name + "\"");
        if (at < 0) return null;
        int open = json.indexOf('"', json.indexOf(':', at) + 1);
        int close = json.indexOf('"', open + 1);
        return open < 0 || close < 0 ? null : json.substring(open + 1, close);
    }

    /** The strings of the "legal_plays" array (card names, ':' and ',' only: no escapes to undo). */
    static List<String> legalPlays(String json) {
        List<String> out = new ArrayList<>();
        int at = json.indexOf("\"legal_plays\"");
        if (at < 0) return out;
        int open = json.indexOf('[', at), close = json.indexOf(']', open);
        for (String item : json.substring(open + 1, close).split(",(?=\\s*\")")) {
            String s = item.trim();
            if (s.length() >= 2) out.add(s.substring(1, s.length() - 1));
        }
        return out;
    }
}
