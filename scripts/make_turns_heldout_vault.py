"""Write sample-vault-turns-heldout/: a second judged vault of raw chat turns, kept out of
every tuning run (issue 21). Written by a different hand from sample-vault-turns: other
people, places and topics, longer and more sentence-like turns in one conversation, typos and
a second language in another, emoji in the third; questions phrased away from the turns'
words. Same line format and writer as `make_turns_vault.py` (`X: text #label`), same bytes on
every run:

    python scripts/make_turns_heldout_vault.py [OUT]   # OUT defaults to sample-vault-turns-heldout
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_turns_vault import build  # a sibling script, not a package

CONVERSATIONS: list[tuple[str, dict[str, str], list[tuple[str, str]]]] = [
    ("margo-obi", {"M": "Margo", "O": "Obi"}, [
        ("2024-01-07T20:10", """
O: happy new year stranger!! how were the holidays
M: Happy new year! Quiet, which was exactly what I needed. Mom came up from Sherbrooke for three days
O: did she bring the tourtière
M: Of course she did. Two of them. I still have one in the freezer
O: jealous. I worked christmas eve AND boxing day, the ER was a zoo #obi-er-xmas
M: Oof. Do you at least get time off now?
O: four days next week, gonna sleep for all of them
M: Big news on my side: I finally did it. I adopted a dog #adopt
O: NO WAY. what kind
M: A three year old beagle mix from the SPCA on Jean-Talon. Her name is Pickle #pickle-beagle
O: pickle!!! send pics immediately
M: Sending. She howls at the radiator, we're working on it
O: lol radiators are scary
M: The other thing is the kitchen. The contractor says he can start on the 22nd, so I'll be washing dishes in the bathtub for a month #kitchen-start
O: who's the contractor
M: A guy called Réjean my neighbour recommended. Seems honest, talks a lot #rejean
O: ok and did you book anything for the cottage yet? we said february
M: Not yet. I was looking at Muskoka, there's a place on Lake Rosseau with a wood stove and a hot tub #muskoka-plan
O: hot tub in february yes please
M: I'll send the link. It's $240 a night but split four ways it's fine
O: who's the four
M: You, me, Dev and Chantal if she can get the weekend off #the-four
O: ok. btw I have my road test on the 30th. don't laugh #road-test-date
M: I would never laugh. How many lessons have you done?
O: eleven. parallel parking is my enemy
M: You'll be fine. Just don't drive like you do in Mario Kart
O: no promises
"""),
        ("2024-02-02T18:30", """
O: ok so. I failed #failed-test
M: Oh no, the road test? What happened
O: rolled through a stop sign in a school zone. instant fail. the examiner didnt even look at me #stop-sign
M: That's brutal. You can rebook though?
O: yeah next slot is march 14, Etobicoke centre #retest-date
M: March 14 then. We'll practise when I'm in Toronto
O: how's the kitchen, is it a kitchen yet
M: It's a hole. Réjean found mould behind the old cabinets so everything is delayed by two weeks #mould-delay
O: ewww
M: And he wants another $1,800 for it. I said yes because what else can I do #extra-1800
O: ugh sorry. hows the beagle
M: Pickle ate a whole bag of clementines yesterday, peel and all #clementines
O: is that even ok for dogs
M: The vet said she'll be fine, just gassy. She was VERY gassy
O: lmao
M: Cottage news: the Lake Rosseau place is booked for the weekend we wanted. So I booked the one in Tobermory instead, Feb 23 to 25 #tobermory-switch
O: tobermory in winter, is anything even open
M: Not much, but there's the cabin, a sauna and a lot of snow. Dev is bringing board games
O: is Chantal in?
M: She can't, her kid has a hockey tournament that weekend. So it's three of us #chantal-out
O: more hot tub space. wait is there a hot tub
M: No hot tub, sorry. The sauna will have to do
O: tragic. I'll bring the wine
M: Bring snow boots too, not those canvas things you wear
O: my vans are fine all year #vans
M: They are absolutely not
"""),
        ("2024-02-26T21:05", """
M: Home! That drive back was long. Are you home safe?
O: yep, Dev dropped me at Kipling station. my legs still hurt from snowshoeing #snowshoe
M: Same. The Bruce Trail part was harder than it looked
O: best part was the sauna then rolling in the snow. 10/10 would freeze again #sauna-snow
M: You screamed so loud the neighbours' lights came on
O: worth it
M: I also lost my phone charger there. It's probably under the couch forever
O: did Pickle survive with the sitter?
M: My student's mom took her. She sent me 40 photos, Pickle slept in the kids' bed #sitter
O: ok that's a teacher life perk
M: Speaking of school, the spring concert is now confirmed for April 18. My grade 10 choir is doing Bohemian Rhapsody, pray for me #concert-apr18
O: the whole thing? with the opera part?
M: The whole thing. The tenors are not ready for Galileo
O: I'm coming. I'll take the train, I want to see the tenors suffer #obi-coming
M: You're the best. I'll save you a seat next to my mom
O: hows the kitchen
M: Cabinets went in yesterday. They're sage green, which I'm now second-guessing #sage-green
O: sage green is very in. trust
M: Countertop arrives March 8 if nothing else goes wrong #countertop
O: knock on wood
M: And your retest is soon, right?
O: 2 weeks. I've been practising with my brother in his Corolla, his nerves are shot #brother-corolla
M: Make sure you stop FULLY at the stop signs
O: three full seconds. count it out loud like a psycho
M: Exactly like a psycho
"""),
        ("2024-03-15T12:40", """
O: GUESS WHO PASSED #passed
M: OBI!!!! Congratulations!!
O: full stops everywhere. the examiner was a different guy, he even smiled
M: I'm so proud. So are you buying a car?
O: thinking about it. my aunt is selling her 2015 Honda Fit, cheap #honda-fit
M: Fits are great. Pickle fits in a Fit
O: lol. how is she
M: She had surgery on Monday, they removed a lump on her side. It was benign, thank god #pickle-lump
O: omg why didnt you tell me
M: I didn't want to worry you before your test. She's wearing the cone of shame now
O: poor baby. send cone pics
M: Sending. She keeps bumping into door frames
O: ok so bad news from my side. I can't come to the concert on the 18th. they put me on nights that whole week #cant-concert
M: Noooo. Can't you swap?
O: tried. Priscilla already swapped with me for Ifeoma's wedding, I owe her #swap-wedding
M: Right, your sister's wedding. That's in Lagos in May, yes? #lagos-may
O: May 11. I fly out on the 6th, mum has me on jollof duty apparently #fly-6th
M: Cooking for 300 people?
O: supervising the aunties. nobody cooks for 300 people alone in my family #aunties
M: Ha. Okay, I'll livestream the concert for you then
O: yes please, I'll watch on my break at 3am
M: It's at 7pm, you'll have to watch the recording
O: fine fine
M: Kitchen is FINALLY done by the way. The countertop came a week late but it's in #kitchen-done
O: so the total delay was what
M: Started Jan 22, should have been done by Feb 20, done yesterday. Almost a month late #delay-total
O: classic contractor
"""),
        ("2024-04-21T10:20", """
M: Concert recap! We survived #concert-recap
O: I watched the recording on my break!! the tenors did Galileo #watched-recording
M: They did! Marc-André hit the high note and the whole gym lost it
O: Marc-André is a legend
M: My principal wants us to take it to the regional festival in Quebec City in June #regional-june
O: go Margo. do you get a trip out of it
M: Two days with 40 teenagers on a bus. Not sure that's a reward
O: lol fair
M: How's the Honda?
O: bought it! silver, 90 thousand km. I named it Jollof #car-jollof
O: I drove to work 4 times already and stalled zero times bc it's an automatic
M: Ha. Does that mean you'll drive to Montreal this summer?
O: thinking about july. 6 hours alone on the 401 tho, not sure yet #drive-montreal
M: You can do it in two chunks. Stop in Kingston, there's a good fish and chips place on the water #kingston
O: the one we went to after dev's birthday? with the seagull
M: That's the one. The seagull that stole your fries
O: I still hold a grudge against that seagull #seagull
M: How's the packing for Lagos
O: 2 weeks to go, I have 3 suitcases and 2 are for gifts. my aunt wants a specific Canadian maple syrup #maple
M: Get the dark amber one. The tins from the Atwater market are the best, I'll send you some #atwater
O: you're an angel
M: Pickle says hi. The cone is off and she's back to howling at the radiator #cone-off
O: some things never change
"""),
    ]),
    ("hamid-lotte", {"H": "Hamid", "L": "Lotte"}, [
        ("2024-04-14T09:00", """
H: Goodmorning lieverd. Are you awake
L: barely, it's sunday pap
H: I have newsss. the bees survived the winter. both hives #bees-survived
L: yesss! even the grumpy one?
H: the grumpy one is the strongest. the queen is laying like crazy. the other one is small but ok #grumpy-strong
L: did you name them yet
H: Hive one is Beatrix and the grumpy one is Máxima #hive-names
L: dad the royal family will sue you
H: lol let them try
L: I have news too. I got the spot on the research cruise!! #cruise-spot
H: the ship?? to where
L: the G.O. Sars, out to the Norwegian Sea for three weeks. we leave from Bergen on May 27 #cruise-date
H: three weeks on a boat. you get seasick on the ferry to Texel
L: I know. I bought the patches already #seasick
H: what do you do there
L: sampling cod larvae for my thesis. plankton nets every 6 hours, day and night #cod-larvae
H: good girl. your mother would be so proud #mother
L: 🥲 yeah
H: how is Sindre
L: he's good! he's coaching the kids handball team now, very serious about it #sindre-handball
H: he is a good boy. tell him the honey is coming
L: he'll love that. are you selling honey this year?
H: Saturday market on the Binnenrotte from june, if the spring is good. Karim said I can share his stand #market-karim
L: the cheese guy?
H: the cheese guy. cheese and honey, perfect combinasion
L: Can't argue with that
"""),
        ("2024-05-09T19:45", """
L: hoi pap! how was the doctor
H: blood pressure too high again. 160 over 95. he gave me new pills #bp-high
L: dad!! are you taking them
H: yes yes, amlodipine in the morning. and less salt he says. no more drop #amlodipine
L: no more drop is a tragedy but ok
H: the bigger problem. Máxima swarmed yesterday. half the colony in a tree by the canal #swarm
L: oh no!! did you get them back?
H: Karim hold the ladder, I got them in a box. now they are in a new hive, I call her Juliana #juliana
L: three hives now then
H: three. I am a big boss beekeeper
L: lol. Well I have a change too. the cruise got moved, the ship needs engine repairs. new dates June 10 to July 1 #cruise-moved
H: so you are on the sea for midsummer
L: yep, midsummer on a research ship, very glamorous
H: and the christmas plan? you still come to Rotterdam?
L: about that... Sindre's parents invited us to Ålesund for christmas. could you come to Bergen in march instead? #xmas-change
H: march in Bergen. rain rain rain
L: it's always raining here, march is no different. but we can go to the fish market and I'll show you my lab #bergen-march
H: ok ok. for you I go. I will fly KLM
L: 💛 thank youuu
H: also I sell the Mercedes. 22 years old. Yusuf from the mosque buys it for his son #mercedes
L: the Mercedes!! end of an era
H: I have the bike now. and the tram. and my knees will thank me #bike-tram
L: you're going to get so fit
H: also. there is a cat
L: what?? what cat
H: not mine. the neighbors. but she sleeps in my chair #neighbor-cat
L: she's yours now dad. sorry
"""),
        ("2024-06-08T08:30", """
H: first market day was today!! we sold 40 jars #market-40
L: FORTY?! dad
H: Karim's cheese customers buy the honey. 8 euro small, 14 big #prices
L: you're a businessman now
H: I am a honey magnaat. Beatrix's honey is light, from the lime trees. Juliana is too young still #lime-honey
L: I leave on monday! packing my thermals and 6 packets of stroopwafels #leave-monday
H: only 6?
L: the luggage limit is harsh ok
H: did you take the seasick patches
L: yes. and ginger. and my lucky hat
H: the green one from your mother
L: the green one ❤️ #green-hat
H: how do I talk with you on the ship
L: only email, satellite internet is slow. no video calls, sorry #email-only
H: ok I write you every evening. you know my english is bad in writing
L: your english is perfect pap
H: how is your kitten
L: Haha it's not my kitten. ok fine it is. Sindre and I adopted a grey kitten last week, Torsk #kitten-torsk
H: Torsk?
L: it means cod 🐟 #torsk-cod
H: you name the cat after your thesis. very romantic
L: she's staying with Sindre while I'm away. he's already sending me 20 videos a day
H: the neighbor cat is also sleeping in my bed now. I call her Poes #poes
L: so you have a cat too. we both got cats the same month lol
H: never. she is the neighbors cat. she only sleeps here and eats here #only-sleeps
L: dad that's literally your cat
"""),
        ("2024-07-03T17:10", """
L: I'M BACK ON LAND
H: welkom back!! how was the sea
L: amazing and awful. we had a storm on day 9, waves of 7 meters, I threw up everything #storm-day9
H: the patches did not work
L: the patches worked until the storm. nothing works in a storm
L: but we got 140 samples!! my supervisor Ingrid is very happy #samples-140
H: 140 fish babies
L: 140 net samples, thousands of larvae. I'll be counting them under the microscope until october #counting-october
H: sounds terrible
L: it is lol. how are the bees
H: the heat is bad. Juliana is weak, I think the queen is gone. I order a new queen from a man in Utrecht #new-queen
L: you can just buy a queen??
H: in a little box with nurse bees. 45 euro #queen-45
L: that's wild
H: and my pressure is good now. 130 over 85 #bp-good
L: YES. the pills are working
H: and the cycling. I ride to the market every saturday, 8 km #cycle-8km
L: I'm proud of you pap
H: also I book the ticket for Bergen. March 14 to 21 #bergen-ticket
L: yay!! you'll meet Torsk
H: and Sindre. I meet him one time only, at your graduation
L: he's nervous, he's practising Dutch words. he can say "lekker" and "gezellig" #sindre-dutch
H: that is all you need
L: ok I'm going to sleep for 14 hours. love you
H: love you lieverd
"""),
        ("2024-07-28T20:00", """
H: lotte the new queen is accepted! Juliana is strong again #queen-accepted
L: yay! long live the queen
H: and I have a problem. too much honey. the market sells maybe 50 jars, I have 200 #too-much-honey
L: that's a good problem. sell online?
H: I don't know computers. you know this #no-computers
L: I'll make you an Instagram. "Honey Hamid" #instagram
H: no no. Karim says the Turkish supermarket on the Zwart Janstraat will take 60 jars #turkish-shop
L: even better, real shop
H: how is the counting
L: slow. I've done 22 samples of 140. my eyes hurt #counted-22
H: take breaks. look at the green thing outside
L: at the trees? haha ok
H: Ingrid is good to you?
L: she is. she wants me to present at a conference in Lisbon in November #lisbon-conf
H: Lisbon! you go?
L: if the abstract is accepted. deadline is august 15 #abstract-deadline
H: you will be accepted. you are the smartest #smartest
L: you're biased
H: of course. also Poes had kittens in my wardrobe #poes-kittens
L: WHAT
H: four. in my winter coat. the neighbors say I can keep one #keep-one
L: dad. you will keep all four
H: no. only one. the black one with the white foot
L: what will you call it
H: Máxima, like the hive #kitten-maxima
L: 😂 of course
"""),
    ]),
    ("gus-wren", {"G": "Gus", "W": "Wren"}, [
        ("2024-08-04T14:00", """
G: Wren! How's the wrist?
W: Still in the cast, three more weeks. Never bouldering in the rain again, lesson learned #wrist-cast
G: The Grampians trip? I told you that wet crimp looked dodgy
W: Yes yes you told me. I fell about two metres onto the edge of the crash pad #fall-2m
G: Ouch. Can you work?
W: Desk duty at the ranger station. Answering calls about wombats mostly #desk-duty
G: honestly sounds kind of great
W: It's fine for a week, then you want to scream #scream
G: So my news: Lantern Moth is going on Kickstarter! Launch is September 10 #ks-launch
W: The moth game! The one with the paper lanterns?
G: That one. Goal is 45k AUD, which is terrifying #ks-goal
W: You'll smash it. The trailer is gorgeous
G: Thanks. Nadia did all the music, it's worth backing just for that #nadia-music
W: Are you still doing the whole thing with just the two of you?
G: Me on code and art, Nadia on sound. And her cousin tests builds for pizza #cousin-tests
W: Classic indie dev pay
G: Also I've gone vegetarian. Week two. I miss bacon so much #veg
W: Wait what brought that on
G: My doctor said my cholesterol is high for a 34 year old, so I'm trying #cholesterol
W: Fair. You should try the lentil thing from that Ethiopian place on Sydney Road #ethiopian
G: Which one, there's like five
W: The one with the yellow door, Saba. Get the misir wat #saba
G: noted
W: Oh and are we still doing Golden Plains? Tickets go on sale Thursday
G: Yes! I'll be online at 9am sharp. Two tickets plus camping #golden-plains
W: You're a hero
"""),
        ("2024-08-29T19:30", """
W: Cast is OFF. My arm looks like a sad noodle #cast-off
G: 🎉 Physio?
W: Twice a week, squeezing a stress ball like my life depends on it #physio-ball
G: Noodle arm recovery arc
W: Did you get the Golden Plains tickets?
G: Bad news, they sold out in 11 minutes. I was in the queue at position 14,000 #gp-sold-out
W: Noooo
G: But! Meredith's lineup just dropped and I got us two for December instead, same paddock basically #meredith
W: Meredith works. Dec 13-15? #meredith-dates
G: Yep. I'll bring the gazebo, you bring the good camp chairs
W: Deal. My chairs are legendary
G: Kickstarter update: we moved launch to September 24. Steam wants the page to go live first, and Nadia's been sick #ks-moved
W: Oh no, sick how?
G: Glandular fever. She's wiped out. She said she'll be ok to do the launch stream though #nadia-sick
W: Poor Nadia. Tell her to rest
G: I'm making her soup lol. Vegetarian soup
W: How is the vegetarian thing going
G: Week six. I had the misir wat at Saba, you were right, it's unreal #saba-yes
W: I'm always right about food
G: Also I broke and ate a sausage at Bunnings. Does that count #bunnings
W: A Bunnings sausage is a cultural obligation, it doesn't count
G: That's what I told myself
W: Big news from me too. I applied for the ranger job in Tasmania. Cradle Mountain #tassie-apply
G: WHAT. Moving to Tassie??
W: If I get it. Interview is next Tuesday over Zoom #interview-tue
G: I'd miss you but that's your dream job
W: It really is. Wombats AND mountains
"""),
        ("2024-09-26T22:15", """
G: WE LAUNCHED. 12k in the first day!!! #launch-12k
W: GUS!!!! That's amazing!! I backed it at the lantern tier
G: The lantern tier!! you get a real paper lantern we fold ourselves #lantern-tier
W: I expect it to be perfect
G: Nadia did the launch stream from her couch with a blanket, 600 people watched #stream-600
W: She's a champion
G: How did the interview go? You've been suspiciously quiet
W: I got it!!! I start at Cradle Mountain on November 4 #got-job
G: YESSSS. I knew it
W: I'm terrified. I've never lived anywhere but Melbourne
G: You'll love it. Dove Lake, the Overland Track, cold air
W: And I need to find somewhere to live. Staff housing is full until January #housing-full
G: So where will you stay?
W: There's a room in a farmhouse in Sheffield, a retired couple rent it out. 40 min drive to the park #sheffield-room
G: Is that the town with the murals?
W: Yes! Murals everywhere. And the couple have alpacas
G: Alpacas are a big upgrade from your current flatmate
W: Jasper is fine. Jasper just never washes a pan
G: What about Meredith? December is after you move
W: Ugh. I'm going to try to fly back for it. It's a 1-hour flight from Launceston #fly-back
G: Don't you dare bail on me
W: I won't! I'll get the time off somehow
G: ok physio question: can you climb yet
W: Only easy top rope. Physio says no bouldering until Christmas #no-boulder
G: Sensible physio
"""),
        ("2024-10-24T12:00", """
G: Kickstarter ended last night. 61,340 dollars from 1,900 backers!!! #ks-final
W: You beat the goal by miles!!!
G: We hit the stretch goal for the Switch port, so now I have to actually make a Switch port 😅 #switch-port
W: Be careful what you wish for
G: Also a publisher emailed. Fable Hollow, the one who did Moss Garden. They want a call #fable-hollow
W: That's big right? Moss Garden was huge
G: It's big. I'm nervous they'll want to change the ending #ending
W: Don't let them touch the ending. The moth going into the lighthouse is perfect
G: Right? I cried making it #cried
W: Packing update: I've shipped 9 boxes to Tassie on the ferry. My whole life is in a shipping container #boxes-ferry
G: What about the car?
W: The Spirit of Tasmania on November 2, overnight with the car #spirit-nov2
G: Book a cabin, not a recliner. Trust me #cabin-advice
W: I booked a recliner because I'm cheap #cheap
G: You'll regret it
W: Probably. Oh, and the Sheffield farmhouse fell through, the couple's daughter is moving back in #sheffield-fell
G: Nooo the alpacas
W: I know. Now I'm in a cabin at the caravan park in Moina for two months until staff housing frees up #moina
G: A caravan park in November in Tassie. Pack a lot of socks
W: My mum knitted me four pairs already #mum-socks
G: Your mum is the best
G: Also the vegetarian thing: my cholesterol went down from 6.8 to 5.4 #chol-down
W: See!! Worth it
G: The doctor was genuinely surprised. I'm keeping it up, mostly. Except at Bunnings #except-bunnings
W: Except at Bunnings, obviously
"""),
        ("2024-11-17T18:40", """
W: Week two in the park! I saw a platypus in Dove Lake on Thursday at dawn #platypus
G: A PLATYPUS. I'm so jealous
W: I cried a little. Also echidnas, wallabies and a tiger snake I did not love #tiger-snake
G: How's the caravan park cabin
W: Cold but cosy. The heater makes a noise like a dying cow #heater
G: Did you regret the recliner on the boat
W: Yes. I slept 2 hours, a kid kicked my seat all night. You were right #recliner-regret
G: I'm always right about boats
W: How was the publisher call?
G: Really good. They don't want to change the ending at all. They want to fund the Switch port and do a physical edition #publisher-good
W: GUS!!! Are you signing?
G: Lawyer is reading the contract. They'd take 30% of sales. Nadia thinks we should #thirty-percent
W: What do you think?
G: I think yes. It means we can pay ourselves for once #pay-ourselves
W: Amazing. Meredith still on? I've booked flights, Dec 12 from Launceston #flights-dec12
G: It's on! I bought a new gazebo because the old one lost a leg at Jasper's birthday #gazebo
W: RIP old gazebo
G: Also Nadia is better. She's back to making weird noises in the studio with a bucket of water #nadia-better
W: For the game?
G: For the moth drowning sound in level 4. Don't ask #bucket-sound
W: I won't ask
W: I can boulder again by the way! Physio cleared me early. There's a gym in Devonport #boulder-cleared
G: Indoor only please. No wet crimps
W: Indoor only. Mostly
"""),
    ]),
]

# (category, question, {label: grade}, expected answer). Written from the dialogue before any
# engine ran on the vault; phrased as a user would ask, not in the turns' own words.
QUESTIONS: list[tuple[str, str, dict[str, int], str]] = [
    # margo-obi
    ("single", "What kind of dog did Margo get?", {"pickle-beagle": 2, "adopt": 1}, "a three-year-old beagle mix from the SPCA"),
    ("single", "What did Pickle eat that upset her stomach?", {"clementines": 2}, "a whole bag of clementines, peel and all"),
    ("single", "Why did Obi fail his first driving exam?", {"stop-sign": 2, "failed-test": 1}, "rolled through a stop sign in a school zone"),
    ("single", "What colour did Margo choose for her kitchen cupboards?", {"sage-green": 2}, "sage green"),
    ("single", "Which song is Margo's choir singing at the spring concert?", {"concert-apr18": 2}, "Bohemian Rhapsody"),
    ("single", "What did Obi call his car?", {"car-jollof": 2}, "Jollof"),
    ("single", "Who minded the dog while Margo was away at the cabin?", {"sitter": 2}, "a student's mom"),
    ("single", "Who suggested the contractor Margo hired?", {"rejean": 2}, "her neighbour"),
    ("multi-hop", "Where did the winter cottage weekend end up, and why not the original choice?", {"muskoka-plan": 1, "tobermory-switch": 2}, "Tobermory; the Lake Rosseau place was booked"),
    ("multi-hop", "Who went on the cottage weekend in the end?", {"the-four": 2, "chantal-out": 2}, "Margo, Obi and Dev; Chantal dropped out"),
    ("multi-hop", "How late was Margo's kitchen renovation, and what set it back first?", {"mould-delay": 2, "delay-total": 2}, "almost a month; mould behind the cabinets"),
    ("multi-hop", "Which car did Obi end up buying, and who was selling it?", {"honda-fit": 2, "car-jollof": 2}, "his aunt's 2015 Honda Fit"),
    ("multi-hop", "What health problems has Pickle had since Margo adopted her?", {"clementines": 2, "pickle-lump": 2}, "ate clementines; a benign lump removed"),
    ("multi-hop", "Why did Obi miss Margo's concert even though he planned to come?", {"obi-coming": 1, "cant-concert": 2, "swap-wedding": 2}, "night shifts; he owed a swap for his sister's wedding"),
    ("multi-hop", "Did Obi get to hear the tenors attempt the Galileo section?", {"concert-apr18": 1, "cant-concert": 1, "watched-recording": 2}, "yes, on the recording during a break"),
    ("temporal", "When did Obi pass his driving test?", {"passed": 2, "retest-date": 2}, "14 March 2024"),
    ("temporal", "When was Obi's first road test?", {"road-test-date": 2}, "30 January 2024"),
    ("temporal", "When did the work on Margo's kitchen start?", {"kitchen-start": 2, "delay-total": 1}, "22 January 2024"),
    ("temporal", "When was the trip to Tobermory?", {"tobermory-switch": 2}, "23-25 February 2024"),
    ("temporal", "When is Obi's sister getting married?", {"lagos-may": 2, "fly-6th": 2}, "11 May 2024"),
    ("temporal", "When did Pickle have her operation?", {"pickle-lump": 2}, "Monday 11 March 2024"),
    ("temporal", "When was Margo's kitchen finished?", {"delay-total": 2, "kitchen-done": 1}, "14 March 2024"),
    ("open-domain", "Is Obi a confident driver?", {"brother-corolla": 2, "drive-montreal": 2, "failed-test": 1}, "no: nervous, unsure about driving six hours alone"),
    ("open-domain", "Does Obi come from a big family?", {"aunties": 2, "swap-wedding": 1}, "yes: 300 guests, aunties cooking together"),
    ("open-domain", "Does Obi dress sensibly for winter?", {"vans": 2}, "no, wears canvas Vans all year"),
    ("open-domain", "What age group does Margo teach?", {"concert-apr18": 2, "regional-june": 1}, "teenagers; a grade 10 choir at a secondary school"),
    ("open-domain", "Has Obi been to Kingston before?", {"kingston": 1, "seagull": 2}, "yes, after Dev's birthday; a seagull stole his fries"),
    # hamid-lotte
    ("single", "Which medicine was Hamid put on for his blood pressure?", {"amlodipine": 2, "bp-high": 1}, "amlodipine"),
    ("single", "Who bought Hamid's old car?", {"mercedes": 2}, "Yusuf from the mosque, for his son"),
    ("single", "What is Lotte researching for her thesis?", {"cod-larvae": 2}, "cod larvae"),
    ("single", "What ship did Lotte sail on?", {"cruise-date": 2}, "the G.O. Sars"),
    ("single", "What team does Sindre coach?", {"sindre-handball": 2}, "a kids' handball team"),
    ("single", "How much does Hamid sell his honey for?", {"prices": 2}, "8 euro small, 14 big"),
    ("single", "What is the name of Lotte's kitten and what does it mean?", {"kitten-torsk": 2, "torsk-cod": 2}, "Torsk, cod"),
    ("single", "Which shop agreed to stock Hamid's honey?", {"turkish-shop": 2}, "the Turkish supermarket on the Zwart Janstraat"),
    ("multi-hop", "What are the names of all of Hamid's hives?", {"hive-names": 2, "juliana": 2}, "Beatrix, Máxima and Juliana"),
    ("multi-hop", "How did Hamid's blood pressure change over the spring?", {"bp-high": 2, "bp-good": 2}, "160/95 in May, 130/85 by July"),
    ("multi-hop", "What happened to the colony that came from the swarm?", {"juliana": 1, "new-queen": 2, "queen-accepted": 2}, "lost its queen in the heat; a new queen was accepted"),
    ("multi-hop", "Where is Lotte spending Christmas, and when will she see her father instead?", {"xmas-change": 2, "bergen-ticket": 2, "bergen-march": 1}, "Ålesund with Sindre's family; Hamid visits Bergen 14-21 March"),
    ("multi-hop", "How does Hamid get around now that he has no car?", {"mercedes": 1, "bike-tram": 2, "cycle-8km": 2}, "bike and tram; cycles 8 km to the market"),
    ("multi-hop", "How did Hamid end up with a kitten?", {"neighbor-cat": 1, "poes": 1, "poes-kittens": 2, "keep-one": 2}, "the neighbours' cat had kittens in his wardrobe; he may keep one"),
    ("multi-hop", "In what ways has Karim helped Hamid?", {"market-karim": 2, "juliana": 2, "turkish-shop": 2}, "shares his stand, held the ladder, found the shop"),
    ("temporal", "When was the research cruise first supposed to leave?", {"cruise-date": 2}, "27 May 2024"),
    ("temporal", "When was Lotte actually at sea?", {"cruise-moved": 2, "leave-monday": 1}, "10 June to 1 July 2024"),
    ("temporal", "When did one of Hamid's hives swarm?", {"swarm": 2}, "8 May 2024"),
    ("temporal", "When is Hamid going to visit Bergen?", {"bergen-ticket": 2, "bergen-march": 1}, "14-21 March 2025"),
    ("temporal", "When did Hamid first sell honey at the market?", {"market-40": 2}, "8 June 2024"),
    ("temporal", "When did Lotte and Sindre get their cat?", {"kitten-torsk": 2}, "the first week of June 2024"),
    ("temporal", "When did the storm hit during the cruise?", {"storm-day9": 2, "cruise-moved": 1}, "day 9, about 18-19 June 2024"),
    ("temporal", "By when does Lotte have to submit her conference abstract?", {"abstract-deadline": 2}, "15 August 2024"),
    ("open-domain", "Does Lotte get seasick easily?", {"seasick": 2, "storm-day9": 1}, "yes, even on the ferry to Texel"),
    ("open-domain", "Is Hamid good with technology?", {"no-computers": 2, "email-only": 1}, "no"),
    ("open-domain", "Is Lotte's mother still alive?", {"mother": 2, "green-hat": 2}, "probably not: 'would be so proud', her hat kept as a lucky charm"),
    ("open-domain", "Does Hamid really not want a cat?", {"only-sleeps": 2, "keep-one": 1, "poes": 1}, "he says so but feeds her, lets her sleep in his bed"),
    ("open-domain", "What religion does Hamid probably practise?", {"mercedes": 2}, "Islam: he knows Yusuf from the mosque"),
    ("open-domain", "Does Hamid believe in his daughter's abilities?", {"smartest": 2, "mother": 1}, "yes, calls her the smartest"),
    # gus-wren
    ("single", "How did Wren injure her wrist?", {"wrist-cast": 2, "fall-2m": 2}, "fell bouldering on a wet hold"),
    ("single", "What is Gus's game called?", {"ks-launch": 2}, "Lantern Moth"),
    ("single", "Who composes the soundtrack for Gus's game?", {"nadia-music": 2}, "Nadia"),
    ("single", "Which dish did Wren recommend at the Ethiopian restaurant?", {"saba": 2}, "misir wat"),
    ("single", "What reward do backers at the lantern level receive?", {"lantern-tier": 2}, "a hand-folded paper lantern"),
    ("single", "Which publisher got in touch with Gus?", {"fable-hollow": 2}, "Fable Hollow"),
    ("single", "How is the moth drowning sound made?", {"nadia-better": 2, "bucket-sound": 2}, "Nadia with a bucket of water"),
    ("single", "What animal did Wren see at dawn that made her cry?", {"platypus": 2}, "a platypus"),
    ("multi-hop", "How much did the crowdfunding campaign raise compared with its target?", {"ks-goal": 2, "ks-final": 2}, "61,340 against 45k AUD"),
    ("multi-hop", "Why are Gus and Wren going to Meredith rather than Golden Plains?", {"golden-plains": 1, "gp-sold-out": 2, "meredith": 2}, "Golden Plains sold out"),
    ("multi-hop", "How did the Kickstarter launch date change, and why?", {"ks-launch": 2, "ks-moved": 2}, "10 to 24 September; Steam page first, Nadia ill"),
    ("multi-hop", "Where is Wren living in Tasmania, and what happened to her first plan?", {"sheffield-room": 2, "sheffield-fell": 2, "moina": 2}, "a caravan-park cabin in Moina; the Sheffield farmhouse fell through"),
    ("multi-hop", "Has going vegetarian helped Gus's health?", {"cholesterol": 2, "chol-down": 2}, "yes, cholesterol 6.8 down to 5.4"),
    ("multi-hop", "Did Gus follow Wren's food recommendation?", {"saba": 2, "saba-yes": 2}, "yes, he had the misir wat at Saba"),
    ("multi-hop", "How has Wren's wrist recovered since the fall?", {"cast-off": 2, "no-boulder": 1, "boulder-cleared": 2}, "cast off, physio, cleared to boulder early"),
    ("multi-hop", "Was Gus right about where to sleep on the ferry?", {"cabin-advice": 2, "recliner-regret": 2}, "yes, the recliner was miserable"),
    ("temporal", "When did the Kickstarter for Lantern Moth go live?", {"ks-moved": 2, "launch-12k": 1}, "24 September 2024"),
    ("temporal", "When does Wren start working at Cradle Mountain?", {"got-job": 2}, "4 November 2024"),
    ("temporal", "When did Wren cross to Tasmania?", {"spirit-nov2": 2}, "2 November 2024"),
    ("temporal", "When was Wren's job interview?", {"interview-tue": 2}, "Tuesday 3 September 2024"),
    ("temporal", "When did Wren spot the platypus?", {"platypus": 2}, "Thursday 14 November 2024"),
    ("temporal", "When did the crowdfunding campaign close?", {"ks-final": 2}, "23 October 2024"),
    ("temporal", "When is the Meredith festival?", {"meredith-dates": 2, "flights-dec12": 1}, "13-15 December 2024"),
    ("open-domain", "Would Wren enjoy an office job?", {"scream": 2, "desk-duty": 1}, "no"),
    ("open-domain", "Is Gus emotionally attached to his game's story?", {"cried": 2, "ending": 1}, "yes, he cried making the ending"),
    ("open-domain", "Is Wren careful with money?", {"cheap": 2}, "yes, she calls herself cheap"),
    ("open-domain", "Is Nadia committed to the project?", {"nadia-sick": 2, "stream-600": 2}, "yes, did the launch stream while ill"),
    ("open-domain", "Is Gus a strict vegetarian?", {"bunnings": 2, "except-bunnings": 2}, "no, he eats the odd Bunnings sausage"),
    ("open-domain", "Is Wren close to her mum?", {"mum-socks": 2}, "yes, her mum knitted her socks"),
    ("open-domain", "Will Gus and Nadia finally earn a wage from the game?", {"pay-ourselves": 2, "thirty-percent": 1}, "likely, if they sign with the publisher"),
]


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent
               / "sample-vault-turns-heldout")
    turns, questions = build(out, CONVERSATIONS, QUESTIONS)
    print(f"{out}: {turns} turns, {questions} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
