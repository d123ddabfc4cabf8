b
bar

foo
bar
foo
bar
bar


foo

foo



c
a
x y
end
c
end
bbar
a
b
end
end
x y
x y
bar


