#include <errno.h>

#include "daemon/base/api_params.h"
#include "test.h"

static int check_small(json_object *value, char *expected, size_t size)
{
        if (json_object_get_int64(value) <= 10)
                return 0;
        snprintf(expected, size, "an integer up to 10");
        return -EINVAL;
}

static const char *const colours[] = { "red", "green", NULL };

static const struct api_param paint_params[] = {
        { .name = "colour", .type = API_PARAM_STRING, .is_required = true, .choices = colours },
        { .name = "coats", .type = API_PARAM_INTEGER, .check = check_small },
        { .name = "dry", .type = API_PARAM_BOOLEAN },
        { .name = "walls", .type = API_PARAM_ARRAY },
        {},
};

static const struct api_method paint = { .name = "paint", .params = paint_params };
static const struct api_method status = { .name = "status" };
static const struct api_method probe = { .name = "probe",
                                         .params = paint_params,
                                         .other_params = "the kind's parameters" };

/* Checks the params given as JSON text; returns the refusal, or "" when they pass. */
static const char *check(const struct api_method *m, const char *json, json_object **checked)
{
        static char why[API_PARAMS_WHY_MAX];
        json_object *params = json ? json_tokener_parse(json) : NULL, *seen = NULL;

        why[0] = '\0';
        if (api_params_check(m, params, &seen, why, sizeof(why)) < 0)
                CHECK(why[0] != '\0');
        else
                CHECK(why[0] == '\0');
        if (checked)
                *checked = seen ? json_object_get(seen) : NULL;
        json_object_put(params);
        return why;
}

static void test_accepted(void)
{
        json_object *seen = (json_object *)1;

        /* Nothing, {} or [] for a method that takes nothing: it sees NULL. */
        CHECK_STREQ(check(&status, NULL, &seen), "");
        CHECK(seen == NULL);
        CHECK_STREQ(check(&status, "{}", &seen), "");
        CHECK(seen == NULL);
        CHECK_STREQ(check(&status, "[]", &seen), "");
        CHECK(seen == NULL);

        CHECK_STREQ(check(&paint, "{\"colour\":\"red\",\"coats\":2,\"dry\":true,\"walls\":[\"n\"]}", &seen),
                    "");
        CHECK(json_object_is_type(seen, json_type_object) && json_object_object_length(seen) == 4);
        json_object_put(seen);

        /* Members not declared go to a method that takes others. */
        CHECK_STREQ(check(&probe, "{\"colour\":\"red\",\"size\":5}", &seen), "");
        CHECK(json_object_object_length(seen) == 2);
        json_object_put(seen);
}

static void test_refused(void)
{
        static const struct {
                const struct api_method *method;
                const char *params, *why;
        } cases[] = {
                { &status, "{\"x\":1}", "status: unknown parameter \"x\" (status takes no parameters)" },
                { &status, "[1]",
                  "status: params must be an object, not an array (status takes no parameters)" },
                { &paint, NULL, "paint: \"colour\" is missing (a string)" },
                { &paint, "[]", "paint: \"colour\" is missing (a string)" },
                { &paint, "[\"red\"]",
                  "paint: params must be an object, not an array (paint takes colour, coats, dry, walls)" },
                { &paint, "{\"colour\":\"red\",\"brush\":1}",
                  "paint: unknown parameter \"brush\" (paint takes colour, coats, dry, walls)" },
                { &paint, "{\"colour\":\"blue\"}",
                  "paint: \"colour\" must be one of red, green, not \"blue\"" },
                { &paint, "{\"colour\":7}", "paint: \"colour\" must be a string, not 7" },
                { &paint, "{\"colour\":\"red\",\"coats\":\"2\"}",
                  "paint: \"coats\" must be an integer, not \"2\"" },
                { &paint, "{\"colour\":\"red\",\"coats\":11}",
                  "paint: \"coats\" must be an integer up to 10, not 11" },
                { &paint, "{\"colour\":\"red\",\"dry\":1}", "paint: \"dry\" must be true or false, not 1" },
                { &paint, "{\"colour\":\"red\",\"walls\":{}}", "paint: \"walls\" must be an array, not {}" },
                { &probe, "[1]",
                  "probe: params must be an object, not an array (probe takes colour, coats, dry, walls and "
                  "the "
                  "kind's parameters)" },
                { &probe, "{\"colour\":\"blue\",\"size\":5}",
                  "probe: \"colour\" must be one of red, green, not \"blue\"" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                CHECK_STREQ(check(cases[i].method, cases[i].params, NULL), cases[i].why);
}

static void test_quotes_are_cut_whole(void)
{
        /* 40 two-byte characters: 80 bytes, cut to 64 at a character boundary. */
        char json[256] = "{\"colour\":\"";

        for (int i = 0; i < 40; i++)
                strcat(json, "\xc3\xa9");
        strcat(json, "\"}");
        CHECK_STREQ(
                check(&paint, json, NULL),
                "paint: \"colour\" must be one of red, green, not \"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
}

int main(void)
{
        RUN(test_accepted);
        RUN(test_refused);
        RUN(test_quotes_are_cut_whole);
        return test_result();
}
