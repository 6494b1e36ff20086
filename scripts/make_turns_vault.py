"""Write sample-vault-turns/: a judged vault of raw chat turns (one memory per turn).

Three multi-week conversations, written by hand as individual turns. Each turn is a line
`X: text` under its session's start time; a trailing ` #label` names the turn so a question
can judge it. The script turns every line into one memory file (`Speaker: text`, created at
the turn's time, `session_id` and a speaker tag in the frontmatter, nothing else) and writes
`questions.jsonl` with the labels resolved to turn ids. Same input, same bytes:

    python scripts/make_turns_vault.py [OUT]      # OUT defaults to sample-vault-turns
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

# (folder, {letter: name}, [(session start, lines)])
CONVERSATIONS: list[tuple[str, dict[str, str], list[tuple[str, str]]]] = [
    ("priya-dan", {"P": "Priya", "D": "Dan"}, [
        ("2025-03-02T19:05", """
D: you alive? haven't heard from you in ages
P: barely. three calvings and a spaniel that ate a sock this week
P: how's Glasgow, still freezing?
D: grim. but I've got news actually
D: the Leeds theatre called back, they want me as head of sound for the new season #leeds-offer
P: DAN. that's huge. the one you interviewed for in January?
D: yeah the Grand. they'd want me from mid April if I say yes
P: and Shona?
D: that's the problem. her job's here and she just signed another year on the flat #shona-glasgow
P: ugh. talk to her properly before you decide anything
D: I know I know
P: ok other thing. Mum and Dad's 40th is in June and we haven't done ANYTHING #anniv-40
D: oh god. when exactly?
P: the 14th. they got married in '85, at the registry office in Leicester #married-85
D: surprise party?
P: surprise party. I was thinking that Lebanese place in Clifton, Yalla, the one with the courtyard #yalla-idea
D: the one where Dad ate his body weight in halloumi?
P: that's the one. he still talks about it
D: fine by me. you're the one who lives down there so you're in charge of the venue lol
P: obviously. you're in charge of music, since that is literally your job #dan-music
D: deal. how's your training going?
P: Bath half is in two weeks and my left calf is being a drama queen #bath-half
D: you'll smash it
P: also Mango's been weird, drinking loads and losing weight, taking her bloods at work tomorrow #mango-weird
D: poor Mango. keep me posted
"""),
        ("2025-03-18T21:40", """
P: I did it!! 1:58:40 #half-time
D: under two hours!! told you
P: blister the size of a 10p on my right heel but worth it #blister
D: gross. proud of you though
P: how did the Shona conversation go
D: better than I thought. she said take it, we'll do long distance for a bit and see #took-job
D: so I said yes to the Grand. start date is the 14th of April #start-date
P: amazing!! where are you going to live
D: looking at flats in Chapel Allerton, apparently it's where all the theatre people live
P: also Mango has hyperthyroidism. vet diagnosing her own cat, very glamorous #mango-thyroid
D: is that bad?
P: it's very manageable. she's on tablets twice a day now, methimazole, she hates me #mango-tablets
D: haha she always hated you
P: bad news on the party though. Yalla is booked for a wedding on the 14th #yalla-booked
D: nooo. any other date?
P: not a weekend one. so new plan, I've put a deposit on the cricket club hall in Keynsham #cricket-hall
D: the one near Auntie Meera's old house?
P: that one. it's got a kitchen and a little garden, and it's cheap
D: who's doing food then
P: still working on it. maybe I ask Yalla if they do catering
D: good shout. I'll start on a playlist
"""),
        ("2025-04-20T11:15", """
D: first week at the Grand done
P: and?? how is it
D: mad. the desk is ancient but the crew are lovely. Opening show is a musical about miners #first-week
P: very Yorkshire
D: found a flat btw. Chapel Allerton, above a bakery, so I'll get fat #flat-bakery
P: and Shona?
D: she's coming down every other weekend. first visit went well actually #shona-visits
P: good. ok party stuff
P: invites went out yesterday, 63 people said yes already #invites
D: 63?? Mum and Dad know 63 people?
P: Mum's choir alone is 20
D: fair
P: Auntie Meera is flying in from Toronto for it, she told me not to tell anyone, especially Mum #meera-flying
D: she's going to cry the second she sees her
P: also I think Dad suspects something. he asked me why I was being "shifty" on the phone #dad-suspects
D: lol you're terrible at lying
P: I am NOT
P: anyway I told him it's because the clinic's getting a new partner and I'm stressed about it. which is also true #clinic-partner
D: smooth. is it a good thing?
P: mixed. she's a horse specialist, so I'll probably do fewer farm calls #horse-vet
D: you always complain about the farm calls
P: I complain about everything, it's how I cope
"""),
        ("2025-05-25T20:30", """
P: three weeks to the party, I'm losing my mind
D: what's left
P: good news, Yalla said yes to catering! so we get the halloumi after all, just not in the courtyard #yalla-catering
D: ha. Dad will be thrilled
P: you're still doing music right
D: yes, I'm bringing a small rig down from the theatre and I'll DJ. half the playlist is 1985 #dj-rig
D: Madonna, Tears for Fears, Dire Straits, the lot
P: and something for Mum, she'll want to dance to Kishore Kumar #kishore
D: already on it
P: what are we giving them though. a card and a cake feels thin
D: what about a framed map of Goa? where they went on honeymoon #goa-map
P: oh that's lovely. you sort that, you've got the theatre's print shop
D: yep
P: how's Shona
D: actually, she's moving to Leeds! got a job at the university library, starts in August #shona-moving
P: WHAT. that's brilliant
D: yeah, we're going to look for a bigger place together #bigger-place
P: ok big news from me too, I signed up for the Cardiff marathon. October #cardiff-marathon
D: a full one?? after your heel drama?
P: the heel is fine now. it's my knee I'm slightly worried about but shh
D: you're mad
P: Mango's bloods are back in range by the way, the tablets are working #mango-normal
"""),
        ("2025-06-16T10:05", """
D: my ears are still ringing
P: that was the best night. Mum cried from the door onwards
D: and then again when Meera walked in from the kitchen #meera-surprise
P: I thought she was going to faint
D: Dad's speech though. didn't know he had it in him
P: the bit about Mum's terrible driving lesson in 1984. I was crying #dad-speech
D: and they loved the map, Dad's already hung it in the hallway #map-hung
P: they've asked us to go to Goa with them next year, for the 41st apparently #goa-next-year
D: I'm in if I can get the time off, the theatre's dead in January
P: how did Shona find it, meeting the whole family at once
D: she survived. Mum took her into the choir by the end of the night #shona-choir
P: lol of course she did
P: bad news is my knee is properly sore since the party. too much dancing on a concrete floor #knee-sore
D: or the training?
P: maybe both. seeing a physio Thursday
D: what about Cardiff
P: if the physio says no I'll drop to the Cardiff half instead #cardiff-half
D: sensible for once
P: and the hall wants the deposit sorted, I'll pay and you owe me half, £120 #deposit
D: I'll transfer it tonight
"""),
    ]),
    ("nour-kasia", {"N": "Nour", "K": "Kasia"}, [
        ("2025-06-08T08:20", """
K: morning! I'm up since 4, as usual
N: I will never understand baker hours
K: I have news, I went to see a space for a second bakery yesterday #second-bakery
N: no! where?
K: in Kazimierz, an old shoe repair shop on Józefa street. tiny but the light is beautiful #kazimierz-shop
N: that's near the synagogue, right? where we had the pierogi
K: yes exactly. but the rent is a lot, I need to think
N: and I finally have a date for my defence: the 24th of September #defence-date
K: congratulations!! so the end is real
N: it's real and terrifying. Garnier still wants changes
K: he always wants changes
N: also we should fix our trip. Porto, end of July, yes? #porto-plan
K: yes please. I need sun and wine and no flour
N: I'll look at flights tonight. from Lyon and Kraków, meet there
K: Tymek has his first proper swimming lessons this summer so I need to fit around those #tymek-swim
N: how old is he now, seven?
K: seven in May. he wants to be a lifeguard, or a dinosaur
N: both noble careers
N: and my sourdough died again. it smelled like nail polish #sourdough-dead
K: you starved it. feed it twice a day and keep it out of your sunny window #feed-starter
N: yes chef
"""),
        ("2025-06-29T21:10", """
N: bad news about Porto. the flights from Kraków are insane, 600 złoty each way with a change #porto-flights
K: what?! that's robbery
N: I looked at Lisbon instead. direct from both cities, half the price #lisbon-switch
K: Lisbon is fine for me! same sun, same wine
N: ok so Lisbon, 18th to 22nd of July? #lisbon-dates
K: yes. I'll ask my sister to take Tymek
N: booked an apartment in Alfama, with a terrace #alfama
K: and I did it. I signed the lease for the Kazimierz shop #lease-signed
N: KASIA!!
K: I know. I'm scared. but it felt right
K: now I need an oven. a bakery in Wrocław is closing, the owner is retiring, he's selling his deck oven #wroclaw-oven
N: second hand is ok for an oven?
K: if it's a good one, yes. it's Italian, older than me probably
N: how's the thesis otherwise. Garnier?
N: he wants chapter 4 rewritten. the one about the tram lines in Grenoble and Lyon #chapter4
K: the whole chapter?
N: the whole thing. he says the comparison isn't fair to Grenoble
K: you'll do it. you always do
K: oh and Tymek got his first swimming badge! 25 metres without stopping #tymek-badge
N: tell him I'm proud!! the lifeguard career is on track
N: the starter is alive by the way, I fed it like you said #starter-alive
"""),
        ("2025-07-27T19:45", """
K: I'm still peeling
N: I TOLD you to put cream on in Cascais #cascais-sunburn
K: I thought the wind meant it wasn't strong
N: it was such a good trip though
K: those custard tarts at Manteigaria. I'm going to try to make them #nata
N: we had what, four each a day?
K: don't say the number out loud
N: and the tram 28 disaster #tram28
K: when you left your phone on the seat and ran after the tram for two stops
N: and the driver just handed it out the window like nothing happened
K: Portuguese people are too nice
N: Elie was jealous we had sun, it rained the whole week of his race #elie-race
K: how did he do?
N: 34th out of 200 in the Alps trail, he's very happy #elie-34th
K: tell him congratulations from me
K: bakery news: opening day is the 1st of September, if everything goes ok #open-sep1
N: and the oven?
K: arrived from Wrocław on Tuesday. three men and a crane #oven-arrived
N: I want a picture of that
K: it's in the group chat. Tymek was so excited about the crane
N: chapter 4 is done by the way. sent it to Garnier yesterday #ch4-done
K: finally! what did he say
N: nothing yet. silence is good with him
"""),
        ("2025-08-24T07:30", """
K: small disaster
N: what happened?
K: the opening is delayed. the oven failed the gas inspection, they need to replace a valve #oven-failed
N: oh no. how long?
K: new opening is the 15th of September. two weeks lost #open-sep15
N: that's not too bad. better than a fire
K: true. and we have a name now: Lipa, like the tree in front of the shop #lipa-name
N: I love that. very poetic for a bakery
K: what about you, is the defence ready
N: practising every day in front of Elie. he could defend it himself by now
N: the jury is four people, and one is an external examiner from Delft. she's very sharp #delft-examiner
K: you're sharper
N: also something strange happened. I got two job offers in the same week #two-offers
K: that's not strange that's amazing
N: a postdoc in Montréal, at McGill. and a job at the city of Grenoble, the transport planning office #offers-detail
K: very different
N: Montréal is the "career" choice. Grenoble is mountains and Elie can keep racing #grenoble-mountains
K: and what does your heart say
N: my heart says I hate snow shovelling and Montréal winters are minus 25
K: so Grenoble
N: I'll decide after the defence. no more big thoughts before the 24th #decide-after
K: wise
K: Tymek asked if you are a doctor yet. I said almost
"""),
        ("2025-09-28T20:00", """
K: DOCTOR NOUR!!!
N: hahaha thank you. it still feels unreal
K: tell me everything
N: the examiner from Delft asked the hardest question, about the Grenoble data, and I actually had an answer #delft-question
N: Garnier smiled. I've never seen him smile #garnier-smiled
K: a historic day twice
N: Elie organised a party in the park after. my parents came from Beirut #parents-beirut
K: oh that's so special
N: and I decided. I'm taking the Grenoble job, I start in November #grenoble-decided
K: I knew it!!
N: Montréal was a good offer but I want a life, not only a CV
K: and how is the bakery, I've been dying to ask
K: opening day was crazy. there was a queue to the corner before 7 #queue
K: we sold out of cardamom buns by 10 #cardamom
N: cardamom buns in Kraków?
K: my Swedish recipe. people went mad for them. now I make three times as many #cardamom-triple
N: I'm so proud of you. two bakeries!
K: Tymek started second grade and tells everyone his mum owns "all the bread" #tymek-school
N: so he gave up on lifeguard?
K: no, he does both. swimming club on Saturdays now #swim-club
N: we need to see each other. come to Grenoble in December? #visit-grenoble
K: yes! Christmas market and fondue
"""),
    ]),
    ("rafa-june", {"R": "Rafa", "J": "June"}, [
        ("2025-09-14T18:30", """
J: hola profe! sorry I disappeared, the first weeks were a blur
R: June! no need to apologise. how is Dublin treating you
J: I'm on my emergency department rotation now. twelve hour shifts, so much coffee #ed-rotation
R: I remember you falling asleep in my chemistry class, so this is karma
J: hey that was one time
J: how are you? how's the knee
R: bad. the surgeon says I need a replacement, it's scheduled for the 24th of November #knee-nov24
J: oh Rafa. are you nervous?
R: a little. mostly I worry about the allotment, who will water my tomatoes #allotment
J: it'll be winter by then, the tomatoes will be done
R: true. this year I have six varieties, the black Krim ones are the best #black-krim
J: you and your tomatoes
R: the book club is reading The Remains of the Day. have you read it? #remains
J: years ago. the butler, right? so sad
R: very English sadness. my group hates him, I defend him
J: of course you do
R: and you, have you decided? children or general practice?
J: still torn. I loved paediatrics in my last rotation but GP is more stable #peds-vs-gp
R: you always lit up when you talked about the children's ward
J: that's true. I'll think about it properly this month
"""),
        ("2025-10-05T23:10", """
J: can't sleep
R: bad shift?
J: a little boy came in with sepsis. three years old. he's in intensive care now #sepsis-boy
R: I'm so sorry. that must have been very heavy
J: his mum kept holding my hand. I did everything right, I think. I just keep seeing his face
R: you care, that's why it stays. it means you're in the right job
J: thank you. I needed to hear that
R: can I tell you something happy, to change the air?
J: please
R: Inés is pregnant! the baby comes in January #ines-pregnant
J: RAFA you're going to be an abuelo!!
R: I am going to be the best abuelo in Andalucía
J: no doubt
R: and book club moved to my flat, because my knee can't do the stairs at the library anymore #bookclub-flat
J: that's nicer anyway
R: it is. I make tortilla and nobody complains about the butler
J: my flatmate Cormac is playing his fiddle at 11pm right now by the way #cormac-fiddle
R: then you won't sleep anyway. go listen
J: he's actually really good. he plays in a trad session in a pub in Smithfield on Thursdays #smithfield-session
R: go one Thursday. doctors need music too
J: I will. night profe
"""),
        ("2025-10-26T17:00", """
R: news from the hospital: someone cancelled, and my surgery is now on the 3rd of November #surgery-nov3
J: that's so soon! three weeks early
R: better. less time to think
J: who's going to help you after?
R: Inés will stay with me for the first week, pregnant and all. she insists #ines-stays
J: she's her father's daughter
J: I have news too. I'm applying for paediatrics. the application closes on Friday #applying-peds
R: ¡por fin! I knew it
J: I need two references. would you write one? I know you're not a doctor but you knew me longest #reference-ask
R: it would be an honour. send me what I need
J: thank you!! it's a character reference, one page
R: the last tomatoes are picked. I made salmorejo with the black Krim, it was purple almost #salmorejo
J: I miss salmorejo so much. the food here is potatoes in all forms
R: you can make it, I'll send you the recipe. you need good bread and good oil
J: my mum is visiting Dublin next weekend, I'll cook for her #mum-visit
R: she will be proud
J: she'll complain the flat is cold. she's right
R: how is the boy, the one from the bad night?
J: he went home last week. completely fine #boy-home
R: ¡qué alegría!
J: I cried in the car park
"""),
        ("2025-11-16T12:20", """
J: how's the new knee??
R: I have a titanium knee and a very bad temper #titanium
J: haha that bad?
R: the first days were terrible. now physio every morning, and crutches to go anywhere #crutches
J: are you doing the exercises? honestly?
R: mostly. the physio is a young woman who shouts at me like a sergeant #physio-sergeant
J: good, you need that
R: Inés found out, it's a girl. they will call her Alba #alba
J: Alba! that's beautiful
R: I cried, like you in your car park
J: I have an interview! for the paediatrics programme, on the 2nd of December #interview-dec2
R: wonderful! where?
J: at the college in Dublin, thank god, no travel #interview-dublin
R: did my reference help?
J: they said it was "unusual and warm". I think that's good #unusual-warm
R: I wrote that you could explain the periodic table to a crying twelve year old. it's true
J: it was one time and I wasn't crying, I was emotional
R: for book club now we read Klara and the Sun. Ishiguro again, the robot one #klara
J: are people still angry at the butler?
R: now they're angry at the robot, for being too good. I defend her too
J: of course
J: I went to Cormac's session in Smithfield on Thursday. I'm going every week now #session-weekly
R: see? medicine and music
"""),
        ("2025-12-14T19:00", """
J: PROFE. I got it. paediatrics training, starting in August #got-peds
R: ¡enhorabuena June! I'm so proud
J: you were right, I light up with the kids
R: I'm always right, it's a teacher thing
J: how's the knee now
R: no more crutches since last week. I walk to the bakery and back every day #no-crutches
R: and today I went to the allotment for the first time since the surgery #back-allotment
J: planting already?
R: broad beans. they go in now and grow all winter. habas in March #broad-beans
J: you're unstoppable
J: bad news though, I can't come to Seville for Christmas. I got the Christmas rota #xmas-rota
R: ay. Inés will be sad, she wanted to meet you
J: I'll come in February instead, before Alba is too big #feb-visit
R: Alba will not even be born in— wait, she's due the 20th of January, so she will be three weeks old #alba-due
J: perfect, I'll get to hold a tiny person who isn't my patient
R: and you'll come to book club. we'll be on a Spanish book by then, I promise #bookclub-spanish
J: deal. what about Cormac, he wants to come too, he's heard so much about your tomatoes
R: tell him to bring the fiddle
"""),
    ]),
]

# (category, question, {label: grade}, note). Labels name turns above; a label without a
# grade in the note is grade 2.
QUESTIONS: list[tuple[str, str, dict[str, int], str]] = [
    # --- single fact
    ("single", "What job was Dan offered at the theatre in Leeds?", {"leeds-offer": 2}, "head of sound at the Grand"),
    ("single", "What was Priya's finishing time in the Bath half marathon?", {"half-time": 2}, "1:58:40"),
    ("single", "What condition was Priya's cat diagnosed with?", {"mango-thyroid": 2, "mango-tablets": 1}, "hyperthyroidism"),
    ("single", "Which medication does Mango take?", {"mango-tablets": 2}, "methimazole twice a day"),
    ("single", "Which neighbourhood of Leeds did Dan find a flat in?", {"flat-bakery": 2}, "Chapel Allerton, above a bakery"),
    ("single", "How many guests had accepted the anniversary invitation in April?", {"invites": 2}, "63"),
    ("single", "What gift did the siblings give their parents?", {"goa-map": 2, "map-hung": 1}, "a framed map of Goa"),
    ("single", "What new job did Shona get?", {"shona-moving": 2}, "university library in Leeds"),
    ("single", "What kind of specialist is the new partner at Priya's clinic?", {"horse-vet": 2, "clinic-partner": 1}, "horse specialist"),
    ("single", "Where is the space Kasia looked at for her second bakery?", {"kazimierz-shop": 2, "second-bakery": 1}, "old shoe repair shop on Józefa street, Kazimierz"),
    ("single", "What was wrong with Nour's sourdough starter?", {"sourdough-dead": 2, "feed-starter": 1}, "died, smelled of nail polish; starved"),
    ("single", "Where did Kasia's oven come from?", {"wroclaw-oven": 2, "oven-arrived": 1}, "a retiring baker in Wrocław"),
    ("single", "What is the new bakery called?", {"lipa-name": 2}, "Lipa, after the tree"),
    ("single", "Where was Nour offered a postdoc?", {"offers-detail": 2}, "McGill, Montréal"),
    ("single", "What sold out first on the opening day of the bakery?", {"cardamom": 2}, "cardamom buns"),
    ("single", "Where did Nour's parents travel from for the celebration?", {"parents-beirut": 2}, "Beirut"),
    ("single", "What did the rafa-june book club read first?", {"remains": 2}, "The Remains of the Day"),
    ("single", "What variety of tomato does Rafa like best?", {"black-krim": 2, "salmorejo": 1}, "black Krim"),
    ("single", "What instrument does June's flatmate play?", {"cormac-fiddle": 2}, "fiddle"),
    ("single", "What will Rafa's granddaughter be called?", {"alba": 2}, "Alba"),
    ("single", "What did Rafa cook with his last tomatoes?", {"salmorejo": 2}, "salmorejo"),
    ("single", "What is Rafa planting at the allotment in December?", {"broad-beans": 2}, "broad beans"),
    # --- multi-hop (several sessions)
    ("multi-hop", "Where did the anniversary party end up, and who did the food in the end?", {"cricket-hall": 2, "yalla-catering": 2, "yalla-booked": 1}, "Keynsham cricket club hall; Yalla catered"),
    ("multi-hop", "Why did the party move away from the Lebanese restaurant Priya first suggested?", {"yalla-idea": 2, "yalla-booked": 2}, "Yalla booked for a wedding on the 14th"),
    ("multi-hop", "How did Dan and Shona's living situation change over the spring?", {"shona-glasgow": 2, "took-job": 2, "shona-visits": 1, "shona-moving": 2, "bigger-place": 1}, "long distance Glasgow-Leeds, then Shona moves to Leeds"),
    ("multi-hop", "How did Priya's running plans change after the anniversary party?", {"cardiff-marathon": 2, "knee-sore": 2, "cardiff-half": 2}, "marathon -> maybe the half because of her knee"),
    ("multi-hop", "How did Mango's treatment go from diagnosis to the latest blood test?", {"mango-weird": 1, "mango-thyroid": 2, "mango-tablets": 2, "mango-normal": 2}, "hyperthyroid, methimazole, bloods back in range"),
    ("multi-hop", "What song era did Dan pick for the party, and why does that year matter?", {"dj-rig": 2, "married-85": 2}, "1985, the year they married"),
    ("multi-hop", "Who surprised Mum at the party, and where had she flown from?", {"meera-flying": 2, "meera-surprise": 2}, "Auntie Meera from Toronto"),
    ("multi-hop", "Why did Nour and Kasia go to Lisbon instead of Porto?", {"porto-plan": 2, "porto-flights": 2, "lisbon-switch": 2}, "flights from Kraków to Porto too expensive"),
    ("multi-hop", "When was the second bakery supposed to open and when did it actually open?", {"open-sep1": 2, "oven-failed": 2, "open-sep15": 2}, "1 Sep, delayed to 15 Sep by the oven inspection"),
    ("multi-hop", "What did the chapter Garnier made Nour rewrite have to do with her final job choice?", {"chapter4": 2, "grenoble-decided": 2, "offers-detail": 1}, "tram lines in Grenoble; she took the Grenoble transport job"),
    ("multi-hop", "How did Tymek's swimming progress over the summer?", {"tymek-swim": 2, "tymek-badge": 2, "swim-club": 2}, "lessons, 25 m badge, Saturday swimming club"),
    ("multi-hop", "What happened with the old oven from Wrocław after it arrived?", {"oven-arrived": 2, "oven-failed": 2}, "arrived by crane, failed the gas inspection"),
    ("multi-hop", "Did the examiner from Delft end up asking Nour a hard question?", {"delft-examiner": 2, "delft-question": 2}, "yes, about the Grenoble data; she answered"),
    ("multi-hop", "How did Nour's sourdough starter do after Kasia's advice?", {"feed-starter": 2, "starter-alive": 2}, "alive after feeding twice a day"),
    ("multi-hop", "What happened to the little boy June treated for sepsis?", {"sepsis-boy": 2, "boy-home": 2}, "intensive care, then home, fine"),
    ("multi-hop", "How did Rafa's knee surgery date change?", {"knee-nov24": 2, "surgery-nov3": 2}, "24 Nov moved to 3 Nov after a cancellation"),
    ("multi-hop", "How did June decide between paediatrics and general practice, and how did it turn out?", {"peds-vs-gp": 2, "applying-peds": 2, "got-peds": 2, "interview-dec2": 1}, "applied for paediatrics, got it"),
    ("multi-hop", "What did the interview panel think of Rafa's reference for June?", {"reference-ask": 2, "unusual-warm": 2}, "unusual and warm"),
    ("multi-hop", "How often does June go to Cormac's trad session now, and where is it?", {"smithfield-session": 2, "session-weekly": 2}, "every week, a pub in Smithfield"),
    ("multi-hop", "Which Ishiguro books has the book club read?", {"remains": 2, "klara": 2}, "The Remains of the Day, Klara and the Sun"),
    ("multi-hop", "How old will Alba be when June visits Seville?", {"alba-due": 2, "feb-visit": 2, "alba": 1}, "about three weeks"),
    # --- temporal
    ("temporal", "When is Priya and Dan's parents' wedding anniversary?", {"anniv-40": 2}, "14 June"),
    ("temporal", "In what year did Priya and Dan's parents marry?", {"married-85": 2}, "1985"),
    ("temporal", "When did Dan start at the Grand?", {"start-date": 2}, "14 April 2025"),
    ("temporal", "When did Priya run the Bath half marathon?", {"bath-half": 2, "half-time": 2}, "mid March 2025"),
    ("temporal", "When did Priya find out that Yalla was booked?", {"yalla-booked": 2}, "18 March 2025"),
    ("temporal", "When does Shona start her new job?", {"shona-moving": 2}, "August 2025"),
    ("temporal", "When is the Cardiff marathon?", {"cardiff-marathon": 2}, "October"),
    ("temporal", "When did the invitations for the anniversary go out?", {"invites": 2}, "19 April 2025"),
    ("temporal", "When is Nour's thesis defence?", {"defence-date": 2}, "24 September 2025"),
    ("temporal", "When were Nour and Kasia in Lisbon?", {"lisbon-dates": 2}, "18-22 July 2025"),
    ("temporal", "When did Kasia sign the lease on the Kazimierz shop?", {"lease-signed": 2}, "late June 2025"),
    ("temporal", "When did the oven arrive from Wrocław?", {"oven-arrived": 2}, "the Tuesday before 27 July 2025"),
    ("temporal", "When does Nour start the Grenoble job?", {"grenoble-decided": 2}, "November 2025"),
    ("temporal", "When did Nour send her rewritten chapter to her supervisor?", {"ch4-done": 2}, "26 July 2025"),
    ("temporal", "When is Kasia visiting Grenoble?", {"visit-grenoble": 2}, "December"),
    ("temporal", "When was Rafa's knee operation?", {"surgery-nov3": 2}, "3 November 2025"),
    ("temporal", "When is June's paediatrics interview?", {"interview-dec2": 2}, "2 December 2025"),
    ("temporal", "When is Rafa's granddaughter due?", {"alba-due": 2, "ines-pregnant": 1}, "20 January 2026"),
    ("temporal", "When does June start paediatrics training?", {"got-peds": 2}, "August 2026"),
    ("temporal", "When did Rafa stop using crutches?", {"no-crutches": 2}, "early December 2025"),
    ("temporal", "When will June visit Seville?", {"feb-visit": 2}, "February 2026"),
    ("temporal", "When did June's mum visit Dublin?", {"mum-visit": 2}, "early November 2025"),
    # --- open-domain / inference
    ("open-domain", "Would Priya's dad enjoy a meal at a Lebanese restaurant?", {"yalla-idea": 2}, "yes, he ate loads of halloumi at Yalla"),
    ("open-domain", "Is Priya good at keeping secrets from her parents?", {"dad-suspects": 2, "clinic-partner": 1}, "not really; Dad noticed she was shifty"),
    ("open-domain", "Does Priya like doing farm visits?", {"horse-vet": 2}, "no, she complains about them"),
    ("open-domain", "Is Dan's mum a sociable person?", {"invites": 2, "shona-choir": 2}, "yes: a choir of 20, took Shona in"),
    ("open-domain", "Would Dan be able to take a holiday in January?", {"goa-next-year": 2}, "likely: the theatre is quiet in January"),
    ("open-domain", "Does Dan's new home have good food nearby?", {"flat-bakery": 2}, "above a bakery"),
    ("open-domain", "Is Priya likely to push through an injury?", {"cardiff-marathon": 2, "knee-sore": 1}, "yes, signed up despite knee worries"),
    ("open-domain", "Would Kasia prefer a holiday by the sea over a city trip in winter?", {"porto-plan": 2, "lisbon-switch": 1}, "wants sun, wine, no flour"),
    ("open-domain", "Does Nour cope well with cold weather?", {"grenoble-mountains": 2}, "no, hates snow shovelling and minus 25"),
    ("open-domain", "Does Nour's partner do endurance sport?", {"elie-race": 2, "elie-34th": 2, "grenoble-mountains": 1}, "yes, trail running in the Alps"),
    ("open-domain", "Is Nour's supervisor easy to please?", {"chapter4": 2, "garnier-smiled": 2}, "no, always wants changes, rarely smiles"),
    ("open-domain", "Did Kasia take the sun in Portugal seriously?", {"cascais-sunburn": 2}, "no, she got sunburned in Cascais"),
    ("open-domain", "Would Kasia try to bake Portuguese pastries at home?", {"nata": 2}, "yes, custard tarts"),
    ("open-domain", "Does Kasia's son like big machines?", {"oven-arrived": 1}, "yes, excited by the crane"),
    ("open-domain", "Is the new bakery's cardamom recipe Polish?", {"cardamom-triple": 2}, "no, Swedish"),
    ("open-domain", "Does Rafa see himself as a good grandfather?", {"ines-pregnant": 2}, "best abuelo in Andalucía"),
    ("open-domain", "Is Rafa patient about his recovery?", {"titanium": 2, "physio-sergeant": 1}, "bad temper"),
    ("open-domain", "Does June find Irish food exciting?", {"salmorejo": 1, "mum-visit": 1}, "potatoes in all forms"),
    ("open-domain", "Why might Rafa care about his students' feelings?", {"reference-ask": 1, "unusual-warm": 2}, "explained the periodic table to a crying student"),
    ("open-domain", "Does June's flat get warm in winter?", {"mum-visit": 2}, "no, it's cold"),
    ("open-domain", "Would June enjoy a night of live folk music?", {"smithfield-session": 2, "session-weekly": 2}, "yes, goes every week"),
    ("open-domain", "Does Rafa tend to take the unpopular side in book discussions?", {"remains": 2, "klara": 2}, "yes, defends the butler and the robot"),
]

_LINE = re.compile(r"^([A-Z]): (.+?)(?: #([a-z0-9-]+))?$")


def build(out: Path,
          conversations: list[tuple[str, dict[str, str], list[tuple[str, str]]]] | None = None,
          questions: list[tuple[str, str, dict[str, int], str]] | None = None,
          ) -> tuple[int, int]:
    """Write the vault into `out`; returns (turns, questions). Only what this script writes
    is replaced (the conversation folders and questions.jsonl); nothing else in `out` is
    touched. `conversations` and `questions` default to this script's own (another vault's
    generator passes its own, in the same shapes)."""
    conversations = CONVERSATIONS if conversations is None else conversations
    questions = QUESTIONS if questions is None else questions
    out.mkdir(parents=True, exist_ok=True)
    for folder, _people, _sessions in conversations:
        if (out / folder).is_dir():
            shutil.rmtree(out / folder)
    labels: dict[str, str] = {}
    turns = 0
    for folder, people, sessions in conversations:
        (out / folder).mkdir()
        for sn, (start, text) in enumerate(sessions, 1):
            at = datetime.fromisoformat(start)
            sid = f"{folder}-s{sn}"
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            for tn, line in enumerate(lines, 1):
                m = _LINE.match(line)
                if m is None:
                    raise SystemExit(f"{sid} line {tn}: not 'X: text': {line!r}")
                who, said, label = people[m.group(1)], m.group(2), m.group(3)
                tid = f"{sid}-t{tn:02d}"
                if label:
                    if label in labels:
                        raise SystemExit(f"label {label!r} used twice")
                    labels[label] = tid
                # one to three minutes a turn, by the length of what came before
                at += timedelta(minutes=1 + len(said) // 60)
                body = f"{who}: {said}\n"
                fm = (f"---\nid: {tid}\ncreated: {at.isoformat()}Z\nsession_id: {sid}\n"
                      f"tags:\n- speaker-{who.lower()}\n---\n")
                (out / folder / f"{tid}.md").write_text(fm + body, encoding="utf-8")
                turns += 1
    rows = []
    for category, query, judged, note in questions:
        rel = {}
        for label, grade in judged.items():
            if label not in labels:
                raise SystemExit(f"question {query!r}: unknown label {label!r}")
            rel[labels[label]] = grade
        rows.append(json.dumps({"query": query, "relevant": rel, "category": category,
                                "note": note}, ensure_ascii=False))
    (out / "questions.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return turns, len(rows)


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent
               / "sample-vault-turns")
    turns, questions = build(out)
    print(f"{out}: {turns} turns, {questions} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
