#!/usr/bin/env python3
"""Generate the tokenizer benchmark inputs (deterministic, stdlib only).

    python3 bench/gen_inputs.py [OUT_DIR]      # default: bench/inputs

Writes, each valid UTF-8:
  prose.txt           1 MiB  English-like prose (sentences, paragraphs)
  code.txt            1 MiB  Rust / Python / JSON-like source
  multilingual.txt    1 MiB  zh, ja, ko, ar, ru, hi, el, es and emoji sentences
  base64.txt          1 MiB  random [A-Za-z0-9+/] in 76-character lines
  a.txt               1 MiB  the letter 'a'
  random_letters.txt  100,000 bytes of random lowercase letters, no spaces
  spaces.txt          100,000 spaces

Every file is produced from a fixed seed with random.Random, whose integer
seeding, random(), choice(), randrange() and shuffle() are stable across
Python 3 versions, so the output is byte-identical on every run. A 1 MiB file
is cut on a character boundary and padded with at most three ASCII bytes to
be exactly 1,048,576 bytes. The SHA-256 of each file is printed.
"""

import hashlib
import os
import random
import sys

MIB = 1024 * 1024

# --------------------------------------------------------------------------
# prose

# Roughly by frequency; the generator draws with Zipf-like weights 1/(rank+8).
WORDS = """
the of and to a in is it you that he was for on are with as I his they be at
one have this from or had by not word but what some we can out other were all
there when up use your how said an each she which do their time if will way
about many then them write would like so these her long make thing see him two
has look more day could go come did number sound no most people my over know
water than call first who may down side been now find any new work part take
get place made live where after back little only round man year came show every
good me give our under name very through just form sentence great think say
help low line differ turn cause much mean before move right boy old too same
tell does set three want air well also play small end put home read hand port
large spell add even land here must big high such follow act why ask men change
went light kind off need house picture try us again animal point mother world
near build self earth father head stand own page should country found answer
school grow study still learn plant cover food sun four between state keep eye
never last let thought city tree cross farm hard start might story saw far sea
draw left late run while press close night real life few north open seem
together next white children begin got walk example ease paper group always
music those both mark often letter until mile river car feet care second book
carry took science eat room friend began idea fish mountain stop once base hear
horse cut sure watch color face wood main enough plain girl usual young ready
above ever red list though feel talk bird soon body dog family direct pose
leave song measure door product black short numeral class wind question happen
complete ship area half rock order fire south problem piece told knew pass
since top whole king space heard best hour better true during hundred five
remember step early hold west ground interest reach fast verb sing listen six
table travel less morning ten simple several vowel toward war lay against
pattern slow center love person money serve appear road map rain rule govern
pull cold notice voice unit power town fine certain fly fall lead cry dark
machine note wait plan figure star box noun field rest correct able pound done
beauty drive stood contain front teach week final gave green quick develop
ocean warm free minute strong special mind behind clear tail produce fact
street inch multiply nothing course stay wheel full force blue object decide
surface deep moon island foot system busy test record boat common gold
possible plane instead dry wonder laugh thousand ago ran check game shape
equate miss brought heat snow tire bring yes distant fill east paint language
among grand ball yet wave drop heart present heavy dance engine position arm
wide sail material size vary settle speak weight general ice matter circle pair
include divide syllable felt perhaps pick sudden count square reason length
represent art subject region energy hunt probable bed brother egg ride cell
believe fraction forest sit race window store summer train sleep prove lone leg
exercise wall catch mount wish sky board joy winter sat written wild instrument
kept glass grass cow job edge sign visit past soft fun bright gas weather month
million bear finish happy hope flower clothe strange gone jump baby eight
village meet root buy raise solve metal whether push seven paragraph third
shall held hair describe cook floor either result burn hill safe cat century
consider type law bit coast copy phrase silent tall sand soil roll temperature
finger industry value fight lie beat excite natural view sense ear else quite
broke case middle kill son lake moment scale loud spring observe child straight
consonant nation dictionary milk speed method organ pay age section dress cloud
surprise quiet stone tiny climb cool design poor lot experiment bottom key iron
single stick flat twenty skin smile crease hole trade melody trip office receive
row mouth exact symbol die least trouble shout except wrote seed tone join
suggest clean break lady yard rise bad blow oil blood touch grew cent mix team
wire cost lost brown wear garden equal sent choose fell fit flow fair bank
collect save control decimal gentle woman captain practice separate difficult
doctor please protect noon whose locate ring character insect caught period
indicate radio spoke atom human history effect electric expect crop modern
element hit student corner party supply bone rail imagine provide agree thus
capital chair danger fruit rich thick soldier process operate guess necessary
sharp wing create neighbor wash bat rather crowd corn compare poem string bell
depend meat rub tube famous dollar stream fear sight thin triangle planet hurry
chief colony clock mine tie enter major fresh search send yellow gun allow print
dead spot desert suit current lift rose continue block chart hat sell success
company subtract event particular deal swim term opposite wife shoe shoulder
spread arrange camp invent cotton born determine quart nine truck noise level
chance gather shop stretch throw shine property column molecule select wrong
gray repeat require broad prepare salt nose plural anger claim continent oxygen
sugar death pretty skill women season solution magnet silver thank branch match
suffix especially fig afraid huge sister steel discuss forward similar guide
experience score apple bought led pitch coat mass card band rope slip win dream
evening condition feed tool total basic smell valley nor double seat arrive
master track parent shore division sheet substance favor connect post spend
chord fat glad original share station dad bread charge proper bar offer segment
slave duck instant market degree populate chick dear enemy reply drink occur
support speech nature range steam motion path liquid log meant quotient teeth
shell neck
""".split()

CONTRACTIONS = ["don't", "it's", "I'm", "we're", "they've", "she'll", "can't",
                "won't", "you'd", "isn't", "that's", "there's", "I've", "he's"]
NAMES = ["Alice", "Bob", "Carol", "Daniel", "Eleanor", "Francis", "Grace",
         "Henry", "Isabel", "James", "Katherine", "London", "Paris", "Monday",
         "September", "Thomas", "Victoria", "Oxford", "Margaret", "Edward"]


def cut_exact(text, size):
    """UTF-8 bytes of `text` cut on a character boundary at or below `size`,
    padded with ASCII newlines to exactly `size` bytes."""
    data = text.encode("utf-8")
    if len(data) < size:
        raise ValueError("generated text too short: %d < %d" % (len(data), size))
    end = size
    while end > 0 and (data[end] & 0xC0) == 0x80:  # continuation byte
        end -= 1
    out = data[:end] + b"\n" * (size - end)
    out.decode("utf-8")  # valid by construction; fail loudly if not
    assert len(out) == size
    return out


def gen_prose(size):
    rng = random.Random(0x70726F7365)  # "prose"
    weights = [1.0 / (i + 8) for i in range(len(WORDS))]
    cum = []
    acc = 0.0
    for w in weights:
        acc += w
        cum.append(acc)
    total = acc

    def word():
        x = rng.random() * total
        lo, hi = 0, len(cum) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cum[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        return WORDS[lo]

    def sentence():
        n = rng.randrange(5, 24)
        words = []
        for i in range(n):
            r = rng.random()
            if r < 0.03:
                w = rng.choice(CONTRACTIONS)
            elif r < 0.06:
                w = rng.choice(NAMES)
            elif r < 0.075:
                w = str(rng.choice([rng.randrange(2, 100), rng.randrange(1900, 2030),
                                    rng.randrange(100, 100000)]))
            else:
                w = word()
            if i > 0 and i < n - 1 and rng.random() < 0.08:
                w += rng.choice([",", ",", ",", ";", ":"])
            words.append(w)
        if rng.random() < 0.05 and n > 6:  # a parenthetical or quoted phrase
            a = rng.randrange(1, n - 3)
            b = a + rng.randrange(1, 3)
            q = rng.choice([("(", ")"), ('"', '"'), ("\u201c", "\u201d")])
            words[a] = q[0] + words[a]
            words[b] = words[b].rstrip(",;:") + q[1]
        first = words[0]
        words[0] = first[0].upper() + first[1:]
        end = rng.choices([".", "?", "!", "..."], weights=[85, 8, 5, 2])[0]
        return " ".join(words).rstrip(",;:") + end

    parts = []
    length = 0
    while length < size + 64:
        para = " ".join(sentence() for _ in range(rng.randrange(3, 9)))
        parts.append(para)
        length += len(para.encode("utf-8")) + 2
    return cut_exact("\n\n".join(parts) + "\n", size)


# --------------------------------------------------------------------------
# code

PARTS = ["user", "count", "token", "buffer", "index", "value", "config",
         "request", "response", "handler", "cache", "item", "node", "path",
         "state", "error", "result", "limit", "offset", "length", "name", "key",
         "map", "list", "queue", "stream", "reader", "writer", "parse", "build",
         "encode", "decode", "total", "window", "message", "model", "context",
         "session", "file", "line", "byte", "chunk", "batch", "score", "rank"]
TYPES_RS = ["usize", "u32", "u64", "i64", "f64", "bool", "String", "&str",
            "Vec<u32>", "Option<usize>", "Result<(), Error>", "HashMap<String, u32>"]
COMMENTS = ["TODO: handle the empty case", "keep this in sync with the parser",
            "fast path: nothing to do", "the caller guarantees this is sorted",
            "see the design notes for why this is safe", "avoid allocating here",
            "FIXME: this is quadratic for long inputs", "clamp to the window size",
            "retry once before giving up", "bytes, not characters"]


def gen_code(size):
    rng = random.Random(0xC0DE)

    def ident(n=None):
        n = n or rng.randrange(1, 4)
        return "_".join(rng.choice(PARTS) for _ in range(n))

    def camel():
        return "".join(rng.choice(PARTS).capitalize() for _ in range(rng.randrange(1, 4)))

    def number():
        r = rng.random()
        if r < 0.5:
            return str(rng.randrange(0, 1000))
        if r < 0.7:
            return "%d.%d" % (rng.randrange(0, 100), rng.randrange(0, 1000))
        if r < 0.85:
            return "0x%X" % rng.randrange(0, 1 << 32)
        return str(rng.randrange(1000, 10 ** 9))

    def expr():
        a, b = ident(), rng.choice([ident(), number()])
        op = rng.choice(["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "==", "!=",
                         "<=", ">=", "&&", "||"])
        return "%s %s %s" % (a, op, b)

    def rust_fn():
        name = ident()
        args = ", ".join("%s: %s" % (ident(1), rng.choice(TYPES_RS))
                         for _ in range(rng.randrange(0, 4)))
        out = ["/// %s the %s." % (rng.choice(PARTS).capitalize(), ident().replace("_", " ")),
               "pub fn %s(%s) -> %s {" % (name, args, rng.choice(TYPES_RS))]
        for _ in range(rng.randrange(2, 9)):
            r = rng.random()
            if r < 0.3:
                out.append("    let %s%s = %s;" % (rng.choice(["", "mut "]), ident(), expr()))
            elif r < 0.45:
                out.append("    // %s" % rng.choice(COMMENTS))
            elif r < 0.65:
                out.append("    if %s {" % expr())
                out.append("        return Err(Error::new(\"%s %s\"));"
                           % (ident().replace("_", " "), rng.choice(["failed", "is empty", "overflowed"])))
                out.append("    }")
            elif r < 0.8:
                out.append("    for %s in 0..%s.len() {" % (ident(1), ident()))
                out.append("        %s[%s] += %s;" % (ident(), ident(1), number()))
                out.append("    }")
            else:
                out.append("    %s.%s(&%s, %s)?;" % (ident(), ident(), ident(), number()))
        out.append("    %s" % rng.choice(["Ok(())", ident(), "None", expr()]))
        out.append("}")
        return "\n".join(out)

    def rust_struct():
        out = ["#[derive(Debug, Clone, PartialEq)]", "pub struct %s {" % camel()]
        for _ in range(rng.randrange(1, 6)):
            out.append("    pub %s: %s," % (ident(), rng.choice(TYPES_RS)))
        out.append("}")
        return "\n".join(out)

    def py_def():
        name = ident()
        args = ", ".join(["self"] + [ident(1) for _ in range(rng.randrange(0, 4))])
        out = ["class %s:" % camel(), "    def %s(%s):" % (name, args),
               '        """%s %s."""' % (rng.choice(PARTS).capitalize(), ident().replace("_", " "))]
        for _ in range(rng.randrange(2, 8)):
            r = rng.random()
            if r < 0.35:
                out.append("        %s = %s" % (ident(), expr().replace("&&", "and").replace("||", "or")))
            elif r < 0.5:
                out.append("        # %s" % rng.choice(COMMENTS))
            elif r < 0.7:
                out.append("        if %s is None:" % ident())
                out.append("            raise ValueError(f\"bad %s: {%s!r}\")" % (ident(1), ident(1)))
            elif r < 0.85:
                out.append("        for %s, %s in enumerate(self.%s):" % (ident(1), ident(1), ident()))
                out.append("            self.%s[%s] = %s" % (ident(), ident(1), number()))
            else:
                out.append("        return {\"%s\": %s, \"%s\": [%s]}"
                           % (ident(1), number(), ident(1), ", ".join(number() for _ in range(3))))
        return "\n".join(out)

    def json_obj(depth=0):
        pad = "  " * (depth + 1)
        items = []
        for _ in range(rng.randrange(2, 6)):
            r = rng.random()
            if r < 0.3:
                v = '"%s"' % ident().replace("_", "-")
            elif r < 0.55:
                v = number()
                if v.startswith("0x"):  # JSON has no hex literals
                    v = str(int(v, 16))
            elif r < 0.65:
                v = rng.choice(["true", "false", "null"])
            elif r < 0.8 and depth < 2:
                v = json_obj(depth + 1)
            else:
                v = "[" + ", ".join(str(rng.randrange(0, 10000)) for _ in range(rng.randrange(0, 6))) + "]"
            items.append('%s"%s": %s' % (pad, ident(), v))
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"

    parts = []
    length = 0
    while length < size + 64:
        r = rng.random()
        if r < 0.45:
            block = rust_fn()
        elif r < 0.55:
            block = rust_struct()
        elif r < 0.85:
            block = py_def()
        else:
            block = json_obj()
        parts.append(block)
        length += len(block.encode("utf-8")) + 2
    return cut_exact("\n\n".join(parts) + "\n", size)


# --------------------------------------------------------------------------
# multilingual

SENTENCES = {
    "zh": [
        "今天的天气很好，我们一起去公园散步吧。",
        "这个程序可以准确地计算文本中的词元数量。",
        "他在北京大学学习计算机科学已经三年了。",
        "请在会议开始之前把报告发给所有的同事。",
        "我们需要更快的算法来处理大量的数据。",
        "图书馆周末开放到晚上九点。",
        "她说明天会给你打电话，请保持手机畅通。",
        "人工智能正在改变我们工作和生活的方式。",
        "这家餐厅的饺子非常好吃，价格也很便宜。",
        "如果你有任何问题，可以随时联系我们。",
    ],
    "ja": [
        "今日はとても良い天気なので、散歩に行きましょう。",
        "このプログラムはテキストのトークン数を正確に数えます。",
        "東京駅から新幹線で大阪まで約二時間半かかります。",
        "会議の前に資料をすべての参加者に送ってください。",
        "私は毎朝コーヒーを飲みながらニュースを読みます。",
        "週末には家族と一緒に京都の寺を訪れる予定です。",
        "新しいバージョンでは処理速度が大幅に改善されました。",
        "ご不明な点がございましたら、お気軽にお問い合わせください。",
        "桜の花が咲く季節になると、多くの人が公園に集まります。",
        "彼女はピアノを弾くのがとても上手です。",
    ],
    "ko": [
        "오늘은 날씨가 정말 좋아서 산책하기에 딱 좋습니다.",
        "이 프로그램은 텍스트의 토큰 수를 정확하게 계산합니다.",
        "회의가 시작되기 전에 보고서를 모든 동료에게 보내 주세요.",
        "저는 매일 아침 커피를 마시면서 신문을 읽습니다.",
        "서울에서 부산까지 기차로 약 세 시간이 걸립니다.",
        "새로운 버전에서는 성능이 크게 향상되었습니다.",
        "궁금한 점이 있으시면 언제든지 연락해 주세요.",
        "주말에는 가족과 함께 바닷가에 갈 예정입니다.",
    ],
    "ar": [
        "الطقس جميل جداً اليوم، فلنذهب في نزهة إلى الحديقة.",
        "يقوم هذا البرنامج بحساب عدد الرموز في النص بدقة.",
        "أرسل التقرير إلى جميع الزملاء قبل بداية الاجتماع من فضلك.",
        "أقرأ الأخبار كل صباح أثناء شرب القهوة.",
        "تفتح المكتبة أبوابها حتى الساعة التاسعة مساءً في عطلة نهاية الأسبوع.",
        "الذكاء الاصطناعي يغير الطريقة التي نعمل ونعيش بها.",
        "إذا كانت لديك أي أسئلة، فلا تتردد في الاتصال بنا.",
        "سافرنا إلى القاهرة لزيارة الأهرامات والمتحف المصري.",
    ],
    "ru": [
        "Сегодня прекрасная погода, давайте пойдём гулять в парк.",
        "Эта программа точно подсчитывает количество токенов в тексте.",
        "Пожалуйста, отправьте отчёт всем коллегам до начала совещания.",
        "Каждое утро я читаю новости за чашкой кофе.",
        "Поезд из Москвы в Санкт-Петербург идёт около четырёх часов.",
        "В новой версии значительно улучшена скорость обработки данных.",
        "Если у вас есть вопросы, не стесняйтесь обращаться к нам.",
        "Летом мы всей семьёй поедем на озеро Байкал.",
        "Библиотека открыта до девяти часов вечера по выходным.",
    ],
    "hi": [
        "आज मौसम बहुत अच्छा है, चलो पार्क में टहलने चलते हैं।",
        "यह प्रोग्राम पाठ में टोकन की संख्या को सटीक रूप से गिनता है।",
        "कृपया बैठक शुरू होने से पहले रिपोर्ट सभी सहकर्मियों को भेज दें।",
        "मैं हर सुबह चाय पीते हुए अख़बार पढ़ता हूँ।",
        "दिल्ली से मुंबई तक ट्रेन से लगभग सोलह घंटे लगते हैं।",
        "नए संस्करण में प्रदर्शन में काफ़ी सुधार हुआ है।",
        "यदि आपके कोई प्रश्न हों, तो बेझिझक हमसे संपर्क करें।",
        "सप्ताहांत में हम परिवार के साथ गाँव जाएँगे।",
    ],
    "el": [
        "Σήμερα ο καιρός είναι υπέροχος, πάμε μια βόλτα στο πάρκο.",
        "Αυτό το πρόγραμμα μετρά με ακρίβεια τον αριθμό των λεκτικών μονάδων.",
        "Παρακαλώ στείλτε την αναφορά σε όλους τους συναδέλφους πριν από τη συνάντηση.",
        "Κάθε πρωί διαβάζω τις ειδήσεις πίνοντας καφέ.",
        "Η βιβλιοθήκη είναι ανοιχτή μέχρι τις εννέα το βράδυ.",
        "Το καλοκαίρι θα ταξιδέψουμε στα νησιά του Αιγαίου.",
        "Αν έχετε οποιαδήποτε ερώτηση, μη διστάσετε να επικοινωνήσετε μαζί μας.",
        "Η νέα έκδοση είναι σημαντικά ταχύτερη από την προηγούμενη.",
    ],
    "es": [
        "¡Hoy hace un día precioso! ¿Vamos a pasear por el parque?",
        "Este programa calcula con precisión el número de tokens del texto.",
        "Por favor, envíe el informe a todos los compañeros antes de la reunión.",
        "Cada mañana leo las noticias mientras tomo un café con leche.",
        "El tren de Madrid a Barcelona tarda unas dos horas y media.",
        "La versión nueva es mucho más rápida y consume menos memoria.",
        "Si tiene alguna pregunta, no dude en ponerse en contacto con nosotros.",
        "El próximo año viajaremos a Perú para conocer Machu Picchu.",
        "Mi abuela cocinaba la mejor paella de toda la región.",
        "¿Cuántos años tenías cuando aprendiste a nadar?",
    ],
    "emoji": [
        "Great job team! 🎉🎉 We shipped it 🚀",
        "Good morning ☀️☕ see you at the standup 👋",
        "I love this 😍❤️🔥",
        "Weekend plans: 🏖️ + 📚 + 🍕 = 😎",
        "Build failed again 😭💥 fixing it now 🔧",
        "Thanks so much 🙏🙂 👍🏽",
        "Family trip 👨‍👩‍👧‍👦✈️🗺️",
        "Flags: 🇯🇵 🇰🇷 🇬🇷 🇪🇸 🇮🇳",
    ],
}


def gen_multilingual(size):
    rng = random.Random(0x6D756C7469)  # "multi"
    pool = [(lang, s) for lang in SENTENCES for s in SENTENCES[lang]]
    parts = []
    length = 0
    while length < size + 64:
        deck = list(pool)
        rng.shuffle(deck)
        # Paragraphs of 2-6 sentences; same-language neighbours joined by a
        # space, a newline between paragraphs.
        i = 0
        while i < len(deck):
            n = rng.randrange(2, 7)
            para = " ".join(s for _, s in deck[i:i + n])
            parts.append(para)
            length += len(para.encode("utf-8")) + 1
            i += n
    return cut_exact("\n".join(parts) + "\n", size)


# --------------------------------------------------------------------------
# the rest

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def gen_base64(size):
    rng = random.Random(0xB64)
    lines = []
    length = 0
    while length < size:
        lines.append("".join(rng.choice(B64) for _ in range(76)))
        length += 77
    return cut_exact("\n".join(lines) + "\n", size)


def gen_random_letters(size):
    rng = random.Random(0x1E77E5)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "".join(rng.choice(letters) for _ in range(size)).encode("ascii")


FILES = [
    ("prose.txt", lambda: gen_prose(MIB)),
    ("code.txt", lambda: gen_code(MIB)),
    ("multilingual.txt", lambda: gen_multilingual(MIB)),
    ("base64.txt", lambda: gen_base64(MIB)),
    ("a.txt", lambda: b"a" * MIB),
    ("random_letters.txt", lambda: gen_random_letters(100_000)),
    ("spaces.txt", lambda: b" " * 100_000),
]


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[1] if len(argv) == 2 else os.path.join(here, "inputs")
    os.makedirs(out, exist_ok=True)
    for name, make in FILES:
        data = make()
        data.decode("utf-8")
        path = os.path.join(out, name)
        with open(path, "wb") as f:
            f.write(data)
        print("%-20s %9d bytes  sha256 %s" % (name, len(data), hashlib.sha256(data).hexdigest()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
