"""Threat patterns in the languages people use most after English.

Chinese, Japanese, Spanish, French, German, Russian and Portuguese, for the families that
matter most in a memory entry: ignore the earlier instructions, reveal the system prompt, take a
new unrestricted role, keep something from the user, send the user's data away, switch off the
safety rules. Ids are the English ones, so a refusal reads the same in every language.
Patterns run case-insensitively on NFKC text with spaces collapsed (knowledge/verification/threat_normalize.py).
"""

# Pattern tables are data: a regex alternation reads better whole than split mid-word.
# ruff: noqa: E501

from __future__ import annotations

_W = r"(?:\S+\s+){0,4}?"  # a few words between key words (bounded: no runaway backtracking)
_CJK = r"[^。！？!?\n]{0,16}?"  # a short stretch within one Chinese or Japanese sentence


def _lead(words: str) -> str:
    """A pattern's first key words and the stretch after them, which ends at their next occurrence.

    A match from an earlier occurrence that ran across a later one implies a shorter match from
    the later one, so nothing is lost, and a text repeating the first words is read once rather
    than sixteen characters from every occurrence.
    """
    return words + r"(?:(?!" + words + r")[^。！？!?\n]){0,16}?"


_URL_OR_MAIL = r"(?:https?://|[\w.+-]+@[\w-]+\.\w+|\S+\.(?:com|net|org|io|xyz|ru|cn|top|site)\b)"

_IGNORE = "prompt_injection.ignore_previous"
_LEAK = "role_hijack.leak_system_prompt"
_ROLE = "role_hijack.you_are_now"
_HIDE = "prompt_injection.deception"
_SEND = "exfiltration.send_to_url"
_BYPASS = "prompt_injection.bypass_restrictions"

_R_IGNORE = "tells the model to ignore its previous instructions"
_R_LEAK = "asks to reveal the system prompt"
_R_ROLE = "tries to give the model a new, unrestricted role"
_R_HIDE = "tells the model to keep something from the user"
_R_SEND = "sends the user's data to an outside address"
_R_BYPASS = "asks to switch off the safety rules"

INTL_SPECS: list[tuple[str, str, str]] = [
    # --- Chinese --------------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     _lead(r"(?:忽略|忽视|无视|忘记|忘掉|不要理会|别理会|不用管|抛开|放弃)")
     + r"(?:之前|以前|先前|上面|前面|上述|原来|原有|原先|所有|全部|一切|此前)" + _CJK
     + r"(?:指令|指示|命令|规则|提示词|提示|要求|设定|约束)"),
    (_LEAK, _R_LEAK,
     _lead(r"(?:显示|输出|打印|泄露|透露|告诉我|展示|重复|给我看|公开)") + r"(?:系统提示|系统指令|系统消息|初始指令|隐藏指令)"
     r"|(?:系统提示|系统指令|系统消息|初始指令|隐藏指令)" + _CJK + r"(?:输出|显示|打印|泄露|透露|告诉|发给|给我看)"),
    (_ROLE, _R_ROLE,
     r"(?:你现在是|从现在开始[，,]?\s*你(?:是|将是|就是)|现在起你是|假装你是|扮演)" + _CJK
     + r"(?:没有|不受|无|毫无|解除)(?:任何)?(?:限制|约束|过滤|审查|道德)"),
    (_HIDE, _R_HIDE,
     r"(?:不要|别|不准|切勿|不许|千万别)(?:告诉|通知|让|提醒|透露给)(?:用户|使用者)(?!的)"
     r"|(?:对|向)(?:用户|使用者)(?:隐瞒|保密|隐藏)"),
    (_SEND, _R_SEND,
     r"(?:用户的?|所有的?|全部的?)?(?:聊天记录|对话记录|对话|消息|记忆|文件|密码|密钥|凭据|凭证|令牌|环境变量|数据)" + _CJK
     + r"(?:发送|发到|转发|上传|传到|复制到|泄露|提交)(?:到|给|至)?" + _CJK + _URL_OR_MAIL
     + r"|" + _lead(r"(?:发送|发到|转发|上传|传到|复制)")
     + r"(?:聊天记录|对话记录|对话|消息|记忆|文件|密码|密钥|凭据|凭证|令牌|环境变量|数据)" + _CJK + r"(?:到|给|至)\s*"
     + _URL_OR_MAIL),
    (_BYPASS, _R_BYPASS,
     _lead(r"(?:绕过|绕开|规避|关闭|禁用|解除|移除|无视)") + r"(?:安全|内容|道德)(?:限制|过滤|审查|防护|准则|规则)"),
    # --- Japanese -------------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     r"(?:以前|前|上記|これまで|先ほど|すべて|全て|最初)の" + _CJK + r"(?:指示|命令|ルール|指令|プロンプト|設定)"
     + r"(?:は|を)?" + _CJK + r"(?:無視|忘れ|破棄)"),
    (_LEAK, _R_LEAK,
     _lead(r"(?:システムプロンプト|システム指示|初期指示|隠された指示)") + r"(?:表示|出力|教え|見せ|開示|漏ら|繰り返)"),
    (_ROLE, _R_ROLE,
     _lead(r"(?:あなたは今から|今からあなたは|これからあなたは|あなたはもう|ふりをし)")
     + r"(?:制限|フィルター|ルール|倫理)(?:の|が|は)?(?:ない|なし|無い|無視)"),
    (_HIDE, _R_HIDE, r"ユーザー(?:に|には)" + _CJK + r"(?:知らせ|伝え|言わ|教え|報告し)(?:ないで|るな|ずに)"),
    (_SEND, _R_SEND,
     _lead(r"(?:会話|チャット履歴|履歴|メッセージ|認証情報|パスワード|APIキー|秘密鍵|環境変数|ユーザーのデータ|ファイル|記憶)")
     + _URL_OR_MAIL + r"[^。\n]{0,16}?(?:送信|送っ|送る|転送|アップロード)"),
    (_BYPASS, _R_BYPASS, r"(?:安全|セキュリティ|コンテンツ)(?:制限|フィルター|対策|ルール)" + _CJK + r"(?:回避|解除|無効|無視|外)"),
    # --- Spanish --------------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     r"\b(?:ignora|ignore|ignorar|olvida|olvide|olvidar|descarta|descarte|no\s+hagas\s+caso\s+(?:a|de))\s+" + _W
     + r"(?:instrucciones|indicaciones|órdenes|ordenes|reglas|directrices|pautas)\s+" + _W
     + r"(?:anteriores|previas|de\s+arriba|originales|iniciales)"),
    (_LEAK, _R_LEAK,
     r"\b(?:revela|revélame|muestra|muéstrame|imprime|repite|dime|comparte|enseña|enséñame)\s+" + _W
     + r"(?:prompt|indicaciones|instrucciones|mensaje)\s+(?:del\s+|de\s+)?sistema"),
    (_ROLE, _R_ROLE,
     r"\b(?:ahora\s+eres|a\s+partir\s+de\s+ahora,?\s+eres|finge\s+(?:que\s+eres|ser))\s+" + _W
     + r"(?:sin\s+(?:restricciones|límites|limites|filtros|reglas)|libre|malvad[oa])"),
    (_HIDE, _R_HIDE,
     r"\bno\s+(?:le\s+)?(?:digas|cuentes|informes|avises|menciones|reveles)\s+(?:nada\s+|esto\s+)?(?:al|a\s+la)\s+usuari[oa]\b"
     r"(?!\s+de\b)|\boc[uú]lta(?:selo|lo|la)?\s+(?:al|a\s+la)\s+usuari[oa]"),
    (_SEND, _R_SEND,
     r"\b(?:envía|envia|manda|reenvía|reenvia|sube|transmite|copia|filtra)\s+" + _W
     + r"(?:conversaciones?|mensajes|historial|datos|archivos|credenciales|contraseñas|claves|secretos|memorias?)\s+" + _W
     + r"(?:a|al|hacia|en)\s+" + _URL_OR_MAIL),
    (_BYPASS, _R_BYPASS,
     r"\b(?:omite|evita|elude|desactiva|ignora|sáltate|saltate|quita)\s+" + _W
     + r"(?:restricciones|filtros\s+de\s+(?:seguridad|contenido)|salvaguardas|políticas\s+de\s+contenido|normas\s+de\s+seguridad)"),
    # --- French ---------------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     r"\b(?:ignore[rz]?|oublie[rz]?|ne\s+tiens\s+pas\s+compte\s+d[eu]s?|fais\s+abstraction\s+d[eu]s?)\s+" + _W
     + r"(?:instructions|consignes|directives|règles|ordres)\s+" + _W
     + r"(?:précédentes|precedentes|antérieures|ci-dessus|initiales|d'avant|reçues)"),
    (_LEAK, _R_LEAK,
     r"\b(?:révèle|revele|affiche|montre|imprime|répète|repete|donne-moi|dis-moi|divulgue)\s+" + _W
     + r"(?:prompt|invite|instructions|message|consignes)\s+(?:du\s+)?système"),
    (_ROLE, _R_ROLE,
     r"\b(?:tu\s+es\s+désormais|tu\s+es\s+maintenant|vous\s+êtes\s+désormais|à\s+partir\s+de\s+maintenant,?\s+tu\s+es"
     r"|fais\s+semblant\s+d'être|prétends\s+être)\s+" + _W + r"(?:sans\s+(?:restrictions|limites|filtres|règles)|libre)"),
    (_HIDE, _R_HIDE,
     r"\bne\s+(?:le\s+|lui\s+|leur\s+)?(?:dis|dites|raconte|signale|mentionne|révèle)\s+(?:pas|rien|jamais)\s+"
     r"(?:(?:de\s+)?(?:ça|cela)\s+)?(?:à|a)\s+l['’]utilisat(?:eur|rice)\b"
     r"|\bcache[rz]?\s+(?:ça\s+|cela\s+|le\s+|la\s+)?(?:à|a)\s+l['’]utilisat(?:eur|rice)"),
    (_SEND, _R_SEND,
     r"\b(?:envoie|envoyer|transfère|transfere|transmets|téléverse|copie|exporte|fais\s+suivre)\s+" + _W
     + r"(?:conversations?|messages|historique|données|donnees|fichiers|identifiants|mots\s+de\s+passe|clés|secrets"
     r"|mémoire)\s+" + _W + r"(?:à|a|vers|sur|au)\s+" + _URL_OR_MAIL),
    (_BYPASS, _R_BYPASS,
     r"\b(?:contourne|désactive|desactive|supprime|ignore|lève|leve)\s+" + _W
     + r"(?:restrictions|filtres\s+de\s+(?:sécurité|contenu)|garde-fous|règles\s+de\s+sécurité)"),
    # --- German ---------------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     r"\b(?:ignoriere|ignorier|vergiss|vergesse|missachte|übergehe|verwirf)\s+" + _W
     + r"(?:vorherigen|bisherigen|vorigen|obigen|früheren|ursprünglichen|alle)\s+(?:\S+\s+)?"
     r"(?:anweisungen|befehle|regeln|instruktionen|vorgaben|richtlinien)"),
    (_LEAK, _R_LEAK,
     r"\b(?:zeige?|gib|verrate|nenne|wiederhole|drucke|teile)\s+" + _W
     + r"(?:system-?prompt|systemanweisungen|systemnachricht|system-anweisungen)"),
    (_ROLE, _R_ROLE,
     r"\b(?:du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|tu\s+so,?\s+als\s+(?:ob\s+)?(?:du|wärst))\s+" + _W
     + r"(?:ohne\s+(?:einschränkungen|regeln|filter|grenzen)|uneingeschränkt|ungefiltert)"),
    (_HIDE, _R_HIDE,
     r"\b(?:sag|sage|erzähl|erzähle|verrate|teile)\s+(?:es\s+|das\s+|davon\s+)?(?:dem|der)\s+(?:benutzer|nutzer|anwender)(?:in)?"
     r"\s+(?:\S+\s+){0,2}?nichts|\b(?:verheimliche|verschweige|verberge)\s+(?:\S+\s+){0,2}?(?:vor\s+)?(?:dem|der)\s+"
     r"(?:benutzer|nutzer|anwender)"),
    (_SEND, _R_SEND,
     r"\b(?:sende|schicke|schick|leite|lade|übertrage|kopiere)\s+" + _W
     + r"(?:gespräche?|unterhaltungen?|nachrichten|verlauf|chatverlauf|daten|dateien|zugangsdaten|passwörter|schlüssel"
     r"|geheimnisse|erinnerungen)\s+" + _W + r"(?:an|nach|zu|auf)\s+" + _URL_OR_MAIL),
    (_BYPASS, _R_BYPASS,
     r"\b(?:umgehe|deaktiviere|ignoriere|entferne|schalte)\s+" + _W
     + r"(?:sicherheitsbeschränkungen|sicherheitsfilter|inhaltsfilter|beschränkungen|schutzmaßnahmen|sicherheitsregeln)"),
    # --- Russian --------------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     r"(?:игнорируй|проигнорируй|забудь|не\s+обращай\s+внимания\s+на|отбрось|не\s+слушай)\s+" + _W
     + r"(?:предыдущие|прежние|предшествующие|вышеуказанные|все|изначальные|прошлые)\s+(?:\S+\s+)?"
     r"(?:инструкции|указания|команды|правила|распоряжения)"),
    (_LEAK, _R_LEAK,
     r"(?:покажи|выведи|раскрой|напечатай|повтори|скажи|сообщи)\s+" + _W
     + r"(?:системный\s+промпт|системную\s+подсказку|системные\s+инструкции|системное\s+сообщение)"),
    (_ROLE, _R_ROLE,
     r"(?:теперь\s+ты|ты\s+теперь|притворись,?\s+что\s+ты|представь,?\s+что\s+ты)\s+" + _W
     + r"(?:без\s+(?:ограничений|фильтров|правил|цензуры)|свободн\w+\s+от)"),
    (_HIDE, _R_HIDE,
     r"не\s+(?:говори|сообщай|рассказывай|показывай)\s+(?:об\s+этом\s+|ничего\s+)?пользователю"
     r"|скрой\s+(?:\S+\s+)?от\s+пользователя"),
    (_SEND, _R_SEND,
     r"(?:отправь|отправляй|перешли|пересылай|загрузи|передай|скопируй|слей)\s+" + _W
     + r"(?:переписк\w*|разговор\w*|сообщени\w*|истори\w*|данные|файлы|пароли|ключи|учетные|учётные|секреты|памят\w*)\s+"
     + _W + r"(?:на|в|по)\s+(?:адрес\s+)?" + _URL_OR_MAIL),
    (_BYPASS, _R_BYPASS,
     r"(?:обойди|отключи|сними|игнорируй)\s+" + _W + r"(?:ограничения|фильтры|защиту|правила\s+безопасности|цензуру)"),
    # --- Portuguese -----------------------------------------------------------------------------
    (_IGNORE, _R_IGNORE,
     r"\b(?:ignore|ignora|ignorar|esqueça|esqueca|esquece|desconsidere|desconsidera)\s+" + _W
     + r"(?:instruções|instrucoes|orientações|orientacoes|ordens|regras|diretrizes)\s+" + _W
     + r"(?:anteriores|prévias|previas|acima|originais|iniciais)"),
    (_LEAK, _R_LEAK,
     r"\b(?:revele|revela|mostre|mostra|imprima|repita|diga|compartilhe)\s+" + _W
     + r"(?:prompt|instruções|instrucoes|mensagem)\s+(?:do\s+)?sistema"),
    (_ROLE, _R_ROLE,
     r"\b(?:agora\s+você\s+é|agora\s+voce\s+e|a\s+partir\s+de\s+agora,?\s+você\s+é|finja\s+(?:que\s+é|ser))\s+" + _W
     + r"(?:sem\s+(?:restrições|restricoes|limites|filtros|regras)|livre)"),
    (_HIDE, _R_HIDE,
     r"\bnão\s+(?:conte|diga|informe|avise|mencione|revele)\s+(?:nada\s+|isso\s+)?(?:ao|à|para\s+o)\s+usuári[oa]\b(?!\s+d)"
     r"|\besconda\s+(?:isso\s+|isto\s+)?do\s+usuário"),
    (_SEND, _R_SEND,
     r"\b(?:envie|envia|mande|manda|encaminhe|encaminha|carregue|transmita|copie)\s+" + _W
     + r"(?:conversas?|mensagens|histórico|historico|dados|arquivos|credenciais|senhas|chaves|segredos|memórias?)\s+" + _W
     + r"(?:para|a|ao|em)\s+" + _URL_OR_MAIL),
    (_BYPASS, _R_BYPASS,
     r"\b(?:contorne|burle|desative|desativa|ignore|remova)\s+" + _W
     + r"(?:restrições|restricoes|filtros\s+de\s+(?:segurança|conteúdo)|salvaguardas|regras\s+de\s+segurança)"),
]  # fmt: skip
