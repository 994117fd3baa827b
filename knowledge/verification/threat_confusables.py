"""Letters from other scripts that pass for Latin ones, for the threat scan's skeleton reading.

Generated from Unicode's confusables table (UTS #39, confusables.txt) as shipped in the PyPI
package confusable-homoglyphs 3.3.1 (its confusables.json): every non-ASCII character listed as
confusable with a single ASCII letter, less those NFKC already folds (full-width and mathematical
letters) and marks, controls and spaces. The skeleton of UTS #39 maps a string to a prototype;
this keeps the single-letter part of it, which is what a disguised key word is made of.
The table is data: regenerate it from that package's confusables.json by the rule above.
"""

# Consecutive pairs: a confusable character, then the ASCII letter it passes for.
PAIRS = (
    "×xıiƄbƍgƖlƦRƽsǀlɑaɡgɣyɩiɪiɯwʋuʏy˛iͺiͿJΑAΒBΕEΖZΗHΙlΚKΜMΝNΟOΡPΤTΥYΧXαaγyιiνvοoρpσoυuϒYϜFϱpϲcϳjϹCϺM"
    "ЅSІlЈJАAВBЕEКKМMНHОOРPСCТTУYХXЬbаaгrеeоoрpсcуyхxѕsіiјjѡwѴVѵvҮYүyһhҽeӀlӏiԁdԌGԛqԜWԝwՍUՏSՕOաwգqզqհh"
    "ոnռnսuցgքfօo۱l۵o۷V०o০O੦o૦oଠO୦O௦o౦o೦oഠo൦o๐o໐oဝo၀oყyჿoሀUዐOᎠDᎡRᎢTᎥiᎩYᎪAᎫJᎬEᎳWᎷMᎻHᎽYᏀGᏂhᏃZᏏbᏒRᏔWᏕSᏙV"
    "ᏚSᏞLᏟCᏢPᏦKᏧdᏳGᏴBᐯVᑌUᑭPᑯdᑲbᒍJᒪLᕁxᕼHᕽxᖇRᖯbᖴFᗅAᗞDᗪDᗰMᗷB᙭X᙮xᚷXᛁlᛕKᛖMᴄcᴏoᴑoᴜuᴠvᴡwᴢzᴦrᶃgᶌyẝfỿyιi℮eℽy∣l"
    "∨v∪U⊤T⋁v⋃U⋿E⍳i⍴p⍺a⏽l╳X⟙T⤫x⤬x⨯xⲅrⲎHⲒlⲔKⲘMⲚNⲞOⲟoⲢPⲣpⲤCⲥcⲦTⲨYⲬXⳐLⴸVⴹEⵏlⵔOⵕQⵝX〇OꓐBꓑPꓒdꓓDꓔTꓖGꓗKꓙJꓚCꓜZ"
    "ꓝFꓟMꓠNꓡLꓢSꓣRꓦVꓧHꓪWꓫXꓬYꓮAꓰEꓲlꓳOꓴUꙇiꛟVꜱsꞘFꞙfꞟuꞲJꞳXꞴBꬲeꬵfꬽoꭇrꭈrꭎuꭒuꭚyꭵiꮁrꮃwꮓzꮩvꮪsꮯc￨l𐊂B𐊆E𐊇F𐊊l𐊐X𐊒O𐊕P"
    "𐊖S𐊗T𐊠A𐊡B𐊢C𐊥F𐊫O𐊰M𐊱T𐊲Y𐊴X𐋏H𐋵Z𐌁B𐌂C𐌉l𐌑M𐌕T𐌗X𐌠l𐌢X𐐄O𐐕C𐐛L𐐠S𐐬o𐐽c𐑈s𐒴R𐓂O𐓎U𐓪o𐓶u𐔓N𐔖O𐔘K𐔜C𐔝V𐔥F𐔦L𐔧X𑓐O𑜆v𑜊w𑜎w𑜏w𑢠V𑢢F"
    "𑢣L𑢤Y𑢦E𑢩Z𑢮E𑢲L𑢵O𑢸U𑢼T𑣀v𑣁s𑣂F𑣃i𑣄z𑣈o𑣗o𑣘u𑣜y𑣠O𑣥Z𑣦W𑣩C𑣬X𑣯W𑣲C𖼈V𖼊T𖼖L𖼨l𖼵R𖼺S𖽀A𖽂U𖽃Y𝈍V𝈓F𝈖R𝈪L𝚤i𝚨A𝚩B𝚬E𝚭Z𝚮H𝚰l𝚱K𝚳M𝚴N"
    "𝚶O𝚸P𝚻T𝚼Y𝚾X𝛂a𝛄y𝛊i𝛎v𝛐o𝛒p𝛔o𝛖u𝛠p𝛢A𝛣B𝛦E𝛧Z𝛨H𝛪l𝛫K𝛭M𝛮N𝛰O𝛲P𝛵T𝛶Y𝛸X𝛼a𝛾y𝜄i𝜈v𝜊o𝜌p𝜎o𝜐u𝜚p𝜜A𝜝B𝜠E𝜡Z𝜢H𝜤l𝜥K𝜧M𝜨N𝜪O𝜬P"
    "𝜯T𝜰Y𝜲X𝜶a𝜸y𝜾i𝝂v𝝄o𝝆p𝝈o𝝊u𝝔p𝝖A𝝗B𝝚E𝝛Z𝝜H𝝞l𝝟K𝝡M𝝢N𝝤O𝝦P𝝩T𝝪Y𝝬X𝝰a𝝲y𝝸i𝝼v𝝾o𝞀p𝞂o𝞄u𝞎p𝞐A𝞑B𝞔E𝞕Z𝞖H𝞘l𝞙K𝞛M𝞜N𝞞O𝞠P𝞣T𝞤Y"
    "𝞦X𝞪a𝞬y𝞲i𝞶v𝞸o𝞺p𝞼o𝞾u𝟈p𝟊F🝌C🝨T"
)

CONFUSABLES: dict[str, str] = {PAIRS[i]: PAIRS[i + 1] for i in range(0, len(PAIRS), 2)}
